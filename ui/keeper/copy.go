package keeper

import (
	"fmt"
	"strconv"
	"strings"

	"vkchat/runtime/chat"
	"vkchat/ui/conversation"
)

// copyCommand is /copy [code [N]|all]: the last reply's answer, one of
// its code blocks, or the whole chat as Markdown, onto the clipboard —
// the mouse-free way to take text out, since a terminal's own selection
// also picks up the panels beside the transcript.
func (k *Keeper) copy(arg string) {
	text, what, err := k.copySelection(strings.Fields(strings.ToLower(arg)))
	if err != nil {
		k.h.Error(err.Error())
		return
	}
	how, err := k.h.Copy(text)
	if err != nil {
		k.h.Error(fmt.Sprintf("could not copy %s: %v", what, err))
		return
	}
	k.h.Info(fmt.Sprintf("copied %s (%s) via %s", what, plural(len(text), "1 byte", strconv.Itoa(len(text))+" bytes"), how))
}

// copySelection picks what /copy's arguments name, and says what it is.
func (k *Keeper) copySelection(args []string) (text, what string, err error) {
	if len(args) > 0 && args[0] == "all" {
		if len(args) > 1 {
			return "", "", fmt.Errorf("/copy all takes nothing more")
		}
		if k.conv.Len() == 0 {
			return "", "", fmt.Errorf("nothing to copy yet")
		}
		return k.conv.Markdown(k.h.Meta(), k.h.Now()), "the whole chat as Markdown", nil
	}
	reply := k.lastReply()
	if reply == nil {
		return "", "", fmt.Errorf("no reply to copy yet")
	}
	if len(args) == 0 {
		return strings.TrimSpace(reply.Content), "the last reply", nil
	}
	if args[0] != "code" || len(args) > 2 {
		return "", "", fmt.Errorf("/copy takes nothing, code, code N or all")
	}
	blocks := conversation.CodeBlocks(reply.Content)
	if len(blocks) == 0 {
		return "", "", fmt.Errorf("the last reply has no code block")
	}
	n := len(blocks)
	if len(args) == 2 {
		n, err = strconv.Atoi(args[1])
		if err != nil || n < 1 || n > len(blocks) {
			return "", "", fmt.Errorf("/copy code: the last reply has %s; pick 1 to %d", plural(len(blocks), "1 code block", strconv.Itoa(len(blocks))+" code blocks"), len(blocks))
		}
	}
	return blocks[n-1], fmt.Sprintf("code block %d of %d", n, len(blocks)), nil
}

// lastReply is the newest assistant turn with an answer.
func (k *Keeper) lastReply() *conversation.Turn {
	ts := k.conv.Turns()
	for i := len(ts) - 1; i >= 0; i-- {
		if t := ts[i]; t.Role == chat.RoleAssistant && strings.TrimSpace(t.Content) != "" {
			return t
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
