package ui

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/chat"
	"vkchat/ui/conversation"
)

// saveMeta is what the save file says about the session.
func (m *Model) saveMeta() conversation.Meta {
	return conversation.Meta{Model: m.info.Path, ModelName: m.info.Name, Params: m.smp.Params}
}

// autosave writes the conversation to its file; it runs after every turn,
// on errors and on quit. When the write fails the conversation stays in
// memory, the status line says so, and the save is tried again on a timer
// (takeSaveRetry) and at the next turn until it goes through.
func (m *Model) autosave() {
	res := m.saver.Autosave(m.conv, m.cfg.conversationsDir(), m.saveMeta(), m.now)
	switch {
	case res.Err != nil:
		m.setError(fmt.Sprintf("could not save the conversation (kept in memory, retrying in %s): %v", res.RetryIn, res.Err))
	case res.Recovered > 0:
		m.setStatus(fmt.Sprintf("saved to %s after %d failed attempts", m.conv.Path(), res.Recovered))
	}
}

// saveRetryMsg is a retry timer going off.
type saveRetryMsg struct{ seq int }

// takeSaveRetry starts the retry timer a failed save asked for, if any;
// Update hands the command to bubbletea.
func (m *Model) takeSaveRetry() tea.Cmd {
	seq, d, ok := m.saver.TakeRetry()
	if !ok {
		return nil
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return saveRetryMsg{seq: seq} })
}

func (m *Model) handleSaveRetry(msg saveRetryMsg) {
	if m.saver.Retry(msg.seq) {
		m.autosave()
	}
}

// rescueUnsaved runs when the chat ends with the last save failed; the
// error says where the conversation went instead.
func (m *Model) rescueUnsaved() error {
	return m.saver.Rescue(m.conv, m.saveMeta(), m.now())
}

// loadConversation replaces the chat with a saved one. A chat from the
// store (/chats, a bare name) goes on in its own file. A file from
// elsewhere (/load ./notes.json) is the user's: it is shown but never
// written back unasked (no format upgrade, no rewrite of hand edits), and
// the chat goes on as a new one in the store once it changes, where
// /chats lists it.
func (m *Model) loadConversation(name string) error {
	dir := m.cfg.conversationsDir()
	path := conversation.Resolve(name, dir)
	if conversation.IsMarkdown(path) {
		return fmt.Errorf("%s is Markdown, written for reading: /load reads the JSON files vkchat saves (/chats lists them)", path)
	}
	c, err := conversation.Read(path, m.smp.Params)
	if err != nil {
		return err
	}
	m.detachGeneration()
	m.resetChat()
	inStore := conversation.InDir(path, dir)
	if inStore {
		m.conv.Load(c, path)
	} else {
		m.conv.LoadCopy(c, path)
	}
	m.smp.Set(c.Params.Sample())
	status := "loaded " + path
	if c.Model != "" && m.info.Path != "" && c.Model != m.info.Path {
		status = fmt.Sprintf("loaded %s (saved with %s)", filepath.Base(path), c.Model)
	}
	if !inStore {
		status += "; the file stays as it is, the chat goes on in a new one in /chats (/save " + name + " writes it back)"
	}
	if shown := m.conv.Messages(true); len(c.Nodes) > 0 && !sameMessages(shown, c.Messages) {
		// Hand edits to "messages" that the branch tree does not have:
		// the tree is what is shown, so say which part was not.
		status += `; its "messages" differ from its branch tree ("nodes"), which is what is shown: edit both, or drop "nodes" to load a single branch`
		m.setError(status)
		return nil
	}
	m.setStatus(status)
	return nil
}

// sameMessages reports whether two message lists say the same.
func sameMessages(a, b []chat.Message) bool {
	return slices.EqualFunc(a, b, func(x, y chat.Message) bool { return x.Role == y.Role && x.Content == y.Content })
}

// keepUnsaved refuses what would replace the conversation (todo says
// what) while its last save failed: the chat stays on screen and in
// memory, and the status line names the error and the way out.
func (m *Model) keepUnsaved(todo string) bool {
	err := m.saver.Err()
	if err == nil {
		return false
	}
	m.setError(fmt.Sprintf("did not %s: this one is not saved (%v); /save PATH puts it elsewhere", todo, err))
	return true
}

// saveAs is /save NAME: a copy of the chat, as Markdown when the name ends
// in .md and JSON otherwise, where conversation.SavePath puts it (a bare
// name in the conversations directory, which /load and /chats read).
func (m *Model) saveAs(name string) {
	path := conversation.SavePath(name, m.cfg.conversationsDir())
	if m.saver.Err() != nil && !conversation.IsMarkdown(path) {
		m.saveElsewhere(path)
		return
	}
	if err := m.saver.SaveCopy(m.conv, path, m.saveMeta(), m.now()); err != nil {
		m.setError("could not save: " + err.Error())
		return
	}
	if conversation.IsMarkdown(path) {
		m.setStatus("saved as Markdown to " + path + " (for reading; /load reads the JSON saves)")
		return
	}
	m.setStatus("saved a copy to " + path)
}

// saveElsewhere is /save PATH while autosaves fail: the conversation moves
// to that file, which later turns then update.
func (m *Model) saveElsewhere(path string) {
	if err := m.saver.Move(m.conv, path, m.saveMeta(), m.now()); err != nil {
		m.setError("could not save: " + err.Error())
		return
	}
	m.setStatus("saved to " + path + "; this chat is now kept there")
}
