package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"vkchat/ui/command"
	"vkchat/ui/input"
	"vkchat/ui/sampler"
	"vkchat/ui/termtext"
	"vkchat/ui/transcript"
)

// keySection is one heading of the key reference.
type keySection = command.KeySection

// reference is every key the chat answers to, once, in the order F1 lists
// them. README's key table is checked against it (TestREADMEKeyTable): a
// new key is a binding in KeyMap and one entry here, and `go test ./ui
// -run TestREADMEKeyTable` prints the README rows to paste.
func (k KeyMap) reference(smp sampler.KeyMap) []keySection {
	return []keySection{
		{Title: "Chat", Keys: []key.Binding{
			k.Send, k.Newline, k.Stop, k.Quit, k.Regenerate, k.NewChat,
			k.History, k.PageUp, k.LineUp, k.BranchPrev, k.Thinking,
			k.Panels, k.Redraw, k.Help,
		}},
		{Title: "Editing the message", Keys: input.EditingKeys()},
		smp.Section(),
		{Title: "Inspector (tab)", Keys: []key.Binding{
			k.Inspect, k.PrevToken, k.FirstToken, k.CandUp, k.Fork, k.PrevBranch,
			k.Heatmap, k.HeatBasis, k.Experts, k.Back,
		}},
	}
}

// keyLines renders the reference in width cells: a heading per section,
// then one row per key (its description wrapped under itself).
func (m *Model) keyLines(width int) []string {
	st := m.styles
	sections := m.keys.reference(m.smp.Keys)
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
