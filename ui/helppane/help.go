package helppane

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/command"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
	"vkchat/ui/transcript"
)

// Pane is the pane over the transcript that F1 opens (every key and
// command), and where /prompt and /chats show what they found. Esc or F1
// closes it.
type Pane struct {
	Shown  bool
	Offset int     // rows scrolled down
	Prompt *Prompt // what /prompt shows; nil otherwise
	Chats  *Chats  // what /chats shows; nil otherwise
}

// Content is what the pane lists, gathered by the root from the
// components: the key reference, the command registry, and the chat's
// state the panes mention.
type Content struct {
	Keys     []command.KeySection
	Commands []*command.Command
	SavedIn  string // where conversations are saved
	Current  string // this chat's file, marked in /chats
	// The thinking switches the next prompt is rendered with.
	ThinkingOff bool
	Effort      string
}

// Toggle is F1: it opens the key reference, or closes whatever is shown.
func (p *Pane) Toggle() { *p = Pane{Shown: !p.Shown} }

// Close is esc.
func (p *Pane) Close() { *p = Pane{} }

// Open shows the pane from its top (/help).
func (p *Pane) Open() { p.Shown, p.Offset = true, 0 }

// ShowPrompt puts /prompt's result in the pane.
func (p *Pane) ShowPrompt(pr *Prompt) { *p = Pane{Shown: true, Prompt: pr} }

// ShowChats puts /chats' list in the pane.
func (p *Pane) ShowChats(c *Chats) { *p = Pane{Shown: true, Chats: c} }

// Wheel scrolls the pane with the mouse wheel (transcript.WheelStep rows a
// notch, as the transcript scrolls); other mouse events do nothing here.
func (p *Pane) Wheel(msg tea.MouseMsg) {
	if msg.Action != tea.MouseActionPress {
		return
	}
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		p.Scroll(-transcript.WheelStep)
	case tea.MouseButtonWheelDown:
		p.Scroll(transcript.WheelStep)
	}
}

// Scroll moves the pane n rows (up when negative).
func (p *Pane) Scroll(n int) { p.Offset = max(p.Offset+n, 0) }

// Commands is the pane's own command, /help.
func (p *Pane) Commands() []command.Command {
	return []command.Command{{Name: "help", Aliases: []string{"?"}, Help: "show keys and commands",
		Run: func(command.Args) tea.Cmd { p.Open(); return nil }}}
}

// View is the pane in w×h cells, scrolled to Offset (held to the content).
func (p *Pane) View(st theme.Styles, c Content, w, h int) []string {
	lines := p.Lines(st, c, w)
	p.Offset = min(max(p.Offset, 0), max(len(lines)-h, 0))
	lines = lines[p.Offset:]
	if len(lines) > h && h > 1 {
		lines = append(lines[:h-1:h-1], st.Hint.Render("… pgdn for more"))
	}
	return termtext.FitLines(lines, w, h)
}

func plural(n int) string {
	if n == 1 {
		return "message"
	}
	return "messages"
}

// Lines is the pane's content in w cells: what /prompt or /chats put
// there, else the F1 screen: every key, every command, where chats go.
func (p *Pane) Lines(st theme.Styles, c Content, w int) []string {
	if p.Prompt != nil {
		return p.Prompt.lines(st, c, w)
	}
	if p.Chats != nil {
		return p.Chats.lines(st, c, w)
	}
	out := []string{st.PanelTitle.Render("Keys") + st.Hint.Render("  (f1 or esc closes · pgup/pgdn scroll)"), ""}
	out = append(out, keyLines(st, c.Keys, w)...)
	out = append(out, "", st.PanelTitle.Render("Commands"), "")
	const usageW = 18 // "/frequency VALUE" and a gap of two
	for _, cmd := range c.Commands {
		desc := transcript.PlainRows(cmd.Help, st.Hint, max(w-usageW, 10))
		if termtext.Width(cmd.Usage()) > usageW-2 {
			// Too long to leave a gap before the description (/think's
			// choices): it takes a row of its own, the description under it.
			out = append(out, st.Value.Render(termtext.Truncate(cmd.Usage(), w)))
			for _, d := range desc {
				out = append(out, strings.Repeat(" ", usageW)+d)
			}
			continue
		}
		for i, d := range desc {
			lead := strings.Repeat(" ", usageW)
			if i == 0 {
				lead = st.Value.Render(fmt.Sprintf("%-*s", usageW, cmd.Usage()))
			}
			out = append(out, lead+d)
		}
	}
	out = append(out, "", st.Hint.Render("ctrl+j also adds a line, for terminals that keep alt+enter for themselves."))
	out = append(out, st.Hint.Render("Start a message with // to send a line beginning with /."))
	out = append(out, st.Hint.Render("Conversations are saved in "+termtext.Sanitize(c.SavedIn)))
	return out
}

// keyLines renders the reference in width cells: a heading per section,
// then one row per key (its description wrapped under itself).
func keyLines(st theme.Styles, sections []command.KeySection, width int) []string {
	keyW := 0
	for _, s := range sections {
		for _, b := range s.Keys {
			keyW = max(keyW, termtext.Width(b.Help().Key))
		}
	}
	keyW = min(keyW, max(width/3, 6))
	descW := max(width-keyW-4, 8)
	var out []string
	for i, s := range sections {
		if i > 0 {
			out = append(out, "")
		}
		out = append(out, st.PanelTitle.Render(s.Title))
		for _, b := range s.Keys {
			h := b.Help()
			desc := transcript.PlainRows(h.Desc, st.Hint, descW)
			for j, d := range desc {
				lead := strings.Repeat(" ", keyW+4)
				if j == 0 {
					lead = "  " + st.Help.ShortKey.Render(termtext.Fit(h.Key, keyW)) + "  "
				}
				out = append(out, lead+d)
			}
		}
	}
	return out
}
