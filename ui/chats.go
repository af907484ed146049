package ui

import (
	"fmt"

	"vkchat/ui/conversation"
	"vkchat/ui/termtext"
	"vkchat/ui/transcript"
)

// chatsPane is /chats: the saved conversations, newest first.
type chatsPane struct {
	dir   string
	saved []conversation.Saved
	err   string
}

// showChats lists the saved conversations in the help pane (esc closes
// it); each row says the /load NAME that opens it.
func (m *Model) showChats() {
	dir := m.cfg.conversationsDir()
	saved, err := conversation.ListSaved(dir)
	p := &chatsPane{dir: dir, saved: saved}
	if err != nil {
		p.err = termtext.Sanitize(err.Error())
	}
	m.chats, m.prompt = p, nil
	m.showHelp, m.helpOffset = true, 0
}

func (m *Model) chatsLines(w int) []string {
	st, p := m.styles, m.chats
	w = max(w, 1)
	lines := transcript.PlainRows(fmt.Sprintf("Saved conversations · %d, newest first", len(p.saved)), st.PanelTitle, w)
	lines = append(lines, transcript.PlainRows("in "+termtext.Sanitize(p.dir)+" · /load NAME opens one · esc closes", st.Hint, w)...)
	lines = append(lines, "")
	if p.err != "" {
		return append(lines, transcript.PlainRows(p.err, st.StatusError, w)...)
	}
	if len(p.saved) == 0 {
		return append(lines, transcript.PlainRows("none yet: chats are saved as you go", st.Meta, w)...)
	}
	for _, s := range p.saved {
		name := termtext.Sanitize(s.Name)
		if cur := m.conv.Path(); cur != "" && cur == s.Path {
			name += " (this chat)"
		}
		lines = append(lines, transcript.PlainRows("/load "+name, st.Value, w)...)
		var desc string
		if s.Err != nil {
			desc = "does not load: " + termtext.Sanitize(s.Err.Error())
		} else {
			desc = fmt.Sprintf("%s · %s · %s", s.Updated.Local().Format("2006-01-02 15:04"), termtext.Sanitize(s.Model), fmt.Sprintf("%d %s", s.Turns, plural(s.Turns, "message", "messages")))
			if s.First != "" {
				desc += " · " + termtext.Truncate(termtext.Sanitize(s.First), 60)
			}
		}
		for _, r := range transcript.PlainRows(desc, st.Meta, max(w-2, 1)) {
			lines = append(lines, "  "+r)
		}
	}
	return lines
}
