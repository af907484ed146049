package ui

import (
	"vkchat/ui/conversation"
	"vkchat/ui/helppane"
	"vkchat/ui/termtext"
)

// showChats lists the saved conversations in the help pane (esc closes
// it); each row says the /load NAME that opens it.
func (m *Model) showChats() {
	dir := m.cfg.conversationsDir()
	saved, err := conversation.ListSaved(dir)
	p := &helppane.Chats{Dir: dir, Saved: saved}
	if err != nil {
		p.Err = termtext.Sanitize(err.Error())
	}
	m.pane.ShowChats(p)
}
