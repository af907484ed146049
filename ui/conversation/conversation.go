package conversation

import (
	"encoding/json"
	"strings"
	"time"

	"vkchat/runtime/chat"
)

// Conversation is one chat: the system prompt, the path of turns on screen
// (the tree behind it is in the turns' Tree, see tree.go), which replies
// keep their per-token detail, and the file it is saved in.
type Conversation struct {
	completion bool // completion mode: no system prompt, text sent as typed
	system     string
	turns      []*Turn
	detail     detailHistory

	path    string                     // the save file; "" until the first save
	origin  loadedCopy                 // a file loaded from outside the chats store (LoadCopy)
	extra   map[string]json.RawMessage // the loaded file's fields this vkchat does not know
	created time.Time                  // when the chat was first saved
	// rev counts changes to the tree (a branch added, dropped or
	// switched), which change what turns on screen say about their place
	// in it: renderers keep their caches while it stays the same.
	rev int
}

// New starts an empty conversation; completion is the model's mode, which
// decides whether there is a system prompt and how typed text is kept.
func New(completion bool, system string) *Conversation {
	c := &Conversation{completion: completion}
	c.SetSystem(system)
	return c
}

// Completion reports whether the conversation is one running text.
func (c *Conversation) Completion() bool { return c.completion }

// System is the system prompt ("" for none).
func (c *Conversation) System() string { return c.system }

// SetCompletion changes the mode when the chat moves to a model of the
// other kind (/model): the turns stay, and are sent as the new mode reads
// them.
func (c *Conversation) SetCompletion(completion bool) { c.completion = completion }

// SetSystem replaces the system prompt; completion mode has none.
func (c *Conversation) SetSystem(s string) {
	if c.completion {
		s = ""
	}
	c.system = s
}

// Turns is the path on screen, oldest first. The slice is the
// conversation's own: callers read it and do not keep it across changes.
func (c *Conversation) Turns() []*Turn { return c.turns }

// Len is the number of turns on screen.
func (c *Conversation) Len() int { return len(c.turns) }

// Last returns the newest turn, or nil.
func (c *Conversation) Last() *Turn {
	if len(c.turns) == 0 {
		return nil
	}
	return c.turns[len(c.turns)-1]
}

// Index is t's position on screen, -1 when it is not on the path.
func (c *Conversation) Index(t *Turn) int {
	for i, x := range c.turns {
		if x == t {
			return i
		}
	}
	return -1
}

// Rev changes whenever the tree does (see the rev field).
func (c *Conversation) Rev() int { return c.rev }

// Path is the file the conversation is saved in, "" before the first save.
func (c *Conversation) Path() string { return c.path }

// Messages is the conversation as the engine and the save file see it. The
// reply being generated is left out of requests (withPartial=false) but
// kept in saves, so a crash mid-reply still keeps what was written.
func (c *Conversation) Messages(withPartial bool) []chat.Message {
	var out []chat.Message
	if !c.completion && c.system != "" {
		out = append(out, chat.Message{Role: chat.RoleSystem, Content: c.system})
	}
	for _, t := range c.turns {
		if t.Streaming && !withPartial {
			continue
		}
		text := t.ModelText()
		if text == "" {
			continue
		}
		out = append(out, chat.Message{Role: t.Role, Content: text})
	}
	return out
}

// UserText is what a typed message becomes: chat turns lose surrounding
// blank space, completion text is kept exactly because it continues a text.
func (c *Conversation) UserText(s string) string {
	if c.completion {
		return s
	}
	return strings.TrimSpace(s)
}

// UserMessages is what the user wrote, oldest first (the input's history
// for a resumed chat).
func (c *Conversation) UserMessages() []string {
	var out []string
	for _, t := range c.turns {
		if t.Role == chat.RoleUser {
			out = append(out, t.Content)
		}
	}
	return out
}

// Replies lists the replies generated in this session (those with
// tokens), oldest first.
func (c *Conversation) Replies() []*Turn {
	var out []*Turn
	for _, t := range c.turns {
		if t.Role == chat.RoleAssistant && len(t.Steps) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// Append adds turns at the end of the path.
func (c *Conversation) Append(ts ...*Turn) { c.turns = append(c.turns, ts...) }

// AddReply appends reply, about to be generated, and makes it the newest
// of the replies that keep their per-token detail, dropping the detail of
// the ones that fall out of the bounds (DetailReplies, DetailTokens).
func (c *Conversation) AddReply(reply *Turn) {
	c.detail.add(reply)
	c.turns = append(c.turns, reply)
}

// Remove takes t off the path (a reply that produced nothing); when it
// was a new alternative at a branch point, the one shown before comes back.
func (c *Conversation) Remove(t *Turn) {
	for i, x := range c.turns {
		if x == t {
			c.turns = append(c.turns[:i], c.turns[i+1:]...)
			c.dropBranch(t, i)
			return
		}
	}
}

// Reset empties the conversation and forgets its file: the next save
// starts a new one. The system prompt is the caller's to set.
func (c *Conversation) Reset() {
	c.turns = nil
	c.detail.reset()
	c.path = ""
	c.origin = loadedCopy{}
	c.extra = nil
	c.created = time.Time{}
	c.rev++
}
