package keeper

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
	"vkchat/ui/command"
	"vkchat/ui/conversation"
)

// Host is what the keeper needs of the chat around it.
type Host interface {
	command.Reporter
	Meta() conversation.Meta // what a save file says about the session
	Now() time.Time
	Completion() bool // completion mode: no roles, no system prompt
	Generating() bool
	// Reset stops the reply in progress and empties the chat and all
	// that shows it.
	Reset()
	SetParams(sample.Params) // the settings a loaded chat was saved with
	Redraw()                 // the transcript changed under its cache
	ShowChats(dir string, saved []conversation.Saved, err error)
	ExportTurn() *conversation.Turn // the inspected, else the newest reply
	// Export writes reply t to path, with the logit lens of its tokens
	// whose lens was read where lens is set; it says how many.
	Export(path string, t *conversation.Turn, lens bool) (lenses int, err error)
	Copy(text string) (how string, err error)
	Edit(t *conversation.Turn, n int) // put message n in the editor
}

// Keeper keeps conv in its file, in the chats store dir.
type Keeper struct {
	conversation.Saver
	conv   *conversation.Conversation
	dir    string
	system string // the system prompt a new chat starts with
	h      Host
}

// New keeps conv in dir; a new chat starts with system as its prompt.
func New(conv *conversation.Conversation, dir, system string, h Host) *Keeper {
	return &Keeper{conv: conv, dir: dir, system: system, h: h}
}

// Save writes the conversation to its file; it runs after every turn,
// on errors and on quit. When the write fails the conversation stays in
// memory, the status line says so, and the save is tried again on a timer
// (RetryCmd) and at the next turn until it goes through.
func (k *Keeper) Save() {
	res := k.Autosave(k.conv, k.dir, k.h.Meta(), k.h.Now)
	switch {
	case res.Err != nil:
		k.h.Error(fmt.Sprintf("could not save the conversation (kept in memory, retrying in %s): %v", res.RetryIn, res.Err))
	case res.Recovered > 0:
		k.h.Info(fmt.Sprintf("saved to %s after %d failed attempts", k.conv.Path(), res.Recovered))
	}
}

// RetryMsg is a retry timer going off.
type RetryMsg struct{ seq int }

// RetryCmd starts the retry timer a failed save asked for, if any.
func (k *Keeper) RetryCmd() tea.Cmd {
	seq, d, ok := k.TakeRetry()
	if !ok {
		return nil
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return RetryMsg{seq: seq} })
}

// HandleRetry saves again when msg is the timer still wanted.
func (k *Keeper) HandleRetry(msg RetryMsg) {
	if k.Retry(msg.seq) {
		k.Save()
	}
}

// RescueChat runs when the chat ends with the last save failed; the error
// says where the conversation went instead.
func (k *Keeper) RescueChat() error {
	return k.Rescue(k.conv, k.h.Meta(), k.h.Now())
}

// KeepUnsaved refuses what would replace the conversation (todo says
// what) while its last save failed: the chat stays on screen and in
// memory, and the status line names the error and the way out.
func (k *Keeper) KeepUnsaved(todo string) bool {
	err := k.Err()
	if err == nil {
		return false
	}
	k.h.Error(fmt.Sprintf("did not %s: this one is not saved (%v); /save PATH puts it elsewhere", todo, err))
	return true
}

// NewChat saves the current chat and starts an empty one (/clear, ctrl+n);
// when the save fails the chat stays (see KeepUnsaved).
func (k *Keeper) NewChat() {
	k.Save()
	if k.KeepUnsaved("start a new chat") {
		return
	}
	old := k.conv.Path()
	k.h.Reset()
	k.conv.SetSystem(k.system)
	if old != "" {
		k.h.Info("new chat; the last one is saved in " + old)
	} else {
		k.h.Info("new chat")
	}
}

// Load replaces the chat with a saved one. A chat from the store (/chats,
// a bare name) goes on in its own file. A file from elsewhere (/load
// ./notes.json) is the user's: it is shown but never written back unasked
// (no format upgrade, no rewrite of hand edits), and the chat goes on as a
// new one in the store once it changes, where /chats lists it.
func (k *Keeper) Load(name string, params sample.Params) error {
	path := conversation.Resolve(name, k.dir)
	if conversation.IsMarkdown(path) {
		return fmt.Errorf("%s is Markdown, written for reading: /load reads the JSON files vkchat saves (/chats lists them)", path)
	}
	c, err := conversation.Read(path, params)
	if err != nil {
		return err
	}
	k.h.Reset()
	inStore := conversation.InDir(path, k.dir)
	if inStore {
		k.conv.Load(c, path)
	} else {
		k.conv.LoadCopy(c, path)
	}
	k.h.SetParams(c.Params.Sample())
	status := "loaded " + path
	if model := k.h.Meta().Model; c.Model != "" && model != "" && c.Model != model {
		status = fmt.Sprintf("loaded %s (saved with %s)", filepath.Base(path), c.Model)
	}
	if !inStore {
		status += "; the file stays as it is, the chat goes on in a new one in /chats (/save " + name + " writes it back)"
	}
	if shown := k.conv.Messages(true); len(c.Nodes) > 0 && !sameMessages(shown, c.Messages) {
		// Hand edits to "messages" that the branch tree does not have:
		// the tree is what is shown, so say which part was not.
		status += `; its "messages" differ from its branch tree ("nodes"), which is what is shown: edit both, or drop "nodes" to load a single branch`
		k.h.Error(status)
		return nil
	}
	k.h.Info(status)
	return nil
}

// sameMessages reports whether two message lists say the same.
func sameMessages(a, b []chat.Message) bool {
	return slices.EqualFunc(a, b, func(x, y chat.Message) bool { return x.Role == y.Role && x.Content == y.Content })
}

// saveAs is /save NAME: a copy of the chat, as Markdown when the name ends
// in .md and JSON otherwise, where conversation.SavePath puts it (a bare
// name in the conversations directory, which /load and /chats read).
func (k *Keeper) saveAs(name string) {
	path := conversation.SavePath(name, k.dir)
	if k.Err() != nil && !conversation.IsMarkdown(path) {
		k.saveElsewhere(path)
		return
	}
	if err := k.SaveCopy(k.conv, path, k.h.Meta(), k.h.Now()); err != nil {
		k.h.Error("could not save: " + err.Error())
		return
	}
	if conversation.IsMarkdown(path) {
		k.h.Info("saved as Markdown to " + path + " (for reading; /load reads the JSON saves)")
		return
	}
	k.h.Info("saved a copy to " + path)
}

// saveElsewhere is /save PATH while autosaves fail: the conversation moves
// to that file, which later turns then update.
func (k *Keeper) saveElsewhere(path string) {
	if err := k.Move(k.conv, path, k.h.Meta(), k.h.Now()); err != nil {
		k.h.Error("could not save: " + err.Error())
		return
	}
	k.h.Info("saved to " + path + "; this chat is now kept there")
}
