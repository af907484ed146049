package keeper

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/chat"
	"vkchat/ui/command"
	"vkchat/ui/conversation"
)

// do wraps a handler that starts nothing.
func do(f func(string)) func(command.Args) tea.Cmd {
	return func(a command.Args) tea.Cmd { f(a.Text); return nil }
}

// Commands are the conversation's slash commands, in the order /help
// lists them: those that change, save and load it, then those that take
// text out of it and edit it.
func (k *Keeper) Commands() (changes, edits []command.Command) {
	changes = []command.Command{
		{Name: "system", ArgHelp: "[TEXT]", Arg: command.Text,
			Help: "set the system prompt; without TEXT clear it",
			Run:  do(k.setSystem)},
		{Name: "clear", Aliases: []string{"new"}, Help: "start a new chat (the old one stays saved)",
			Run: do(func(string) { k.NewChat() })},
		{Name: "save", ArgHelp: "[NAME]", Arg: command.Text,
			Help: "save the conversation now, or a copy to NAME: Markdown if it ends in .md, else JSON; a bare name goes with the saved chats, a path (./x, ~/x) where it says",
			Run:  do(k.saveCommand)},
		{Name: "load", ArgHelp: "NAME", Arg: command.TextRequired,
			Help: "resume a saved conversation: a name /chats lists (the same rule as /save), or a path",
			Run:  do(k.loadCommand)},
		{Name: "chats", Aliases: []string{"history"}, Help: "list the saved conversations, newest first, with the /load NAME that opens each",
			Run: do(func(string) { saved, err := conversation.ListSaved(k.dir); k.h.ShowChats(k.dir, saved, err) })},
		{Name: "export", ArgHelp: "[--lens] FILE", Arg: command.TextRequired,
			Help: "write the inspected (else the latest) reply's tokens, log-probabilities and top alternatives as JSON Lines; vkchat replay FILE re-runs it; --lens adds the logit lens of each token whose lens you read (the inspector's l), as eval --lens --json shapes it",
			Run:  do(k.export)},
	}
	edits = []command.Command{
		{Name: "edit", ArgHelp: "[N]", Arg: command.Text,
			Help: "edit your last message (or your Nth) and send it again as a new branch; the old one stays (alt+, / alt+.); esc cancels",
			Run:  do(k.edit)},
		{Name: "copy", ArgHelp: "[code [N]|all]", Arg: command.Text,
			Help: "copy the last reply; code: its last code block (code N: the Nth); all: the whole chat as Markdown (OSC 52, and the system clipboard)",
			Run:  do(k.copy)},
	}
	return changes, edits
}

// setSystem is /system [TEXT].
func (k *Keeper) setSystem(text string) {
	if k.h.Completion() {
		k.h.Error("completion mode has no system prompt: the text is sent as it is")
		return
	}
	k.conv.SetSystem(text)
	k.h.Redraw()
	if text == "" {
		k.h.Info("system prompt cleared")
	} else {
		k.h.Info("system prompt set; it applies from the next reply")
	}
	k.Save()
}

// saveCommand is /save [NAME].
func (k *Keeper) saveCommand(name string) {
	if name != "" {
		k.saveAs(name)
		return
	}
	k.Save()
	if k.Err() == nil && k.conv.Path() != "" {
		k.h.Info("saved to " + k.conv.Path())
	} else if k.conv.Path() == "" {
		k.h.Info("nothing to save yet")
	}
}

// loadCommand is /load NAME.
func (k *Keeper) loadCommand(name string) {
	k.Save()
	if k.KeepUnsaved("load another chat") {
		return
	}
	if err := k.Load(name, k.h.Meta().Params); err != nil {
		k.h.Error("could not load: " + err.Error())
	}
}

// export is /export [--lens] FILE: a reply as the JSON Lines export vkchat
// replay reads, with the lens where asked.
func (k *Keeper) export(arg string) {
	path, lens := arg, false
	if rest, ok := strings.CutPrefix(arg, "--lens "); ok {
		path, lens = strings.TrimSpace(rest), true
	}
	t := k.h.ExportTurn()
	switch {
	case t == nil || t.Export == nil:
		k.h.Error("nothing to export: /export writes a reply generated in this session")
		return
	case t.Streaming:
		k.h.Error("the reply is still being written: export it when it is done")
		return
	case !t.HasDetail():
		k.h.Error(fmt.Sprintf("details not kept for this older reply (only the %d newest replies keep each token's alternatives): /export a recent one", conversation.DetailReplies))
		return
	}
	path = conversation.ExpandHome(path)
	n, err := k.h.Export(path, t, lens)
	switch {
	case errors.Is(err, conversation.ErrNoLensRead):
		k.h.Error("nothing written: no token of this reply has its logit lens read — inspect it, press l on the tokens you want, then /export --lens " + path)
		return
	case err != nil:
		k.h.Error("could not export: " + err.Error())
		return
	}
	what := ""
	if lens {
		what = fmt.Sprintf(" and the lens of %d", n)
	}
	k.h.Info(fmt.Sprintf("exported %d tokens%s to %s · vkchat replay %s re-runs them", len(t.Steps), what, path, path))
}

// edit is /edit [N]: the Nth message you wrote (the last one without N)
// goes into the input to be changed and sent again.
func (k *Keeper) edit(arg string) {
	if k.h.Generating() {
		k.h.Error("a reply is still being written: Esc stops it, then /edit")
		return
	}
	if k.h.Completion() {
		k.h.Error("completion mode has no messages to edit: the text is one document")
		return
	}
	var users []*conversation.Turn
	for _, t := range k.conv.Turns() {
		if t.Role == chat.RoleUser {
			users = append(users, t)
		}
	}
	if len(users) == 0 {
		k.h.Error("no message to edit yet")
		return
	}
	n := len(users)
	if arg = strings.TrimSpace(arg); arg != "" {
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 || v > len(users) {
			k.h.Error(fmt.Sprintf("/edit N: N is a message of yours, 1 to %d (the last one without N)", len(users)))
			return
		}
		n = v
	}
	k.h.Edit(users[n-1], n)
	k.h.Info(fmt.Sprintf("editing your message %d of %d: enter sends it as a new branch (the old one stays: alt+, / alt+.) · esc cancels", n, len(users)))
}
