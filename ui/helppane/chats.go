package helppane

import (
	"fmt"

	"vkchat/ui/conversation"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
	"vkchat/ui/transcript"
)

// Chats is /chats: the saved conversations, newest first.
type Chats struct {
	Dir   string
	Saved []conversation.Saved
	Err   string
}

func (p *Chats) lines(st theme.Styles, c Content, w int) []string {
	w = max(w, 1)
	lines := transcript.PlainRows(fmt.Sprintf("Saved conversations · %d, newest first", len(p.Saved)), st.PanelTitle, w)
	lines = append(lines, transcript.PlainRows("in "+termtext.Sanitize(p.Dir)+" · /load NAME opens one · esc closes", st.Hint, w)...)
	lines = append(lines, "")
	if p.Err != "" {
		return append(lines, transcript.PlainRows(p.Err, st.StatusError, w)...)
	}
	if len(p.Saved) == 0 {
		return append(lines, transcript.PlainRows("none yet: chats are saved as you go", st.Meta, w)...)
	}
	for _, s := range p.Saved {
		name := termtext.Sanitize(s.Name)
		if cur := c.Current; cur != "" && cur == s.Path {
			name += " (this chat)"
		}
		lines = append(lines, transcript.PlainRows("/load "+name, st.Value, w)...)
		var desc string
		if s.Err != nil {
			desc = "does not load: " + termtext.Sanitize(s.Err.Error())
		} else {
			desc = fmt.Sprintf("%s · %s · %s", s.Updated.Local().Format("2006-01-02 15:04"), termtext.Sanitize(s.Model), fmt.Sprintf("%d %s", s.Turns, plural(s.Turns)))
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
