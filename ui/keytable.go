package ui

import (
	"github.com/charmbracelet/bubbles/key"

	"vkchat/ui/command"
	"vkchat/ui/input"
	"vkchat/ui/inspector"
	"vkchat/ui/sampler"
)

// keySection is one heading of the key reference.
type keySection = command.KeySection

// reference is every key the chat answers to, once, in the order F1 lists
// them. README's key table is checked against it (TestREADMEKeyTable): a
// new key is a binding in KeyMap and one entry here, and `go test ./ui
// -run TestREADMEKeyTable` prints the README rows to paste.
func (k KeyMap) reference(smp sampler.KeyMap, insp inspector.KeyMap) []keySection {
	return []keySection{
		{Title: "Chat", Keys: []key.Binding{
			k.Send, k.Newline, k.Stop, k.Quit, k.Regenerate, k.NewChat,
			k.History, k.PageUp, insp.LineUp, k.BranchPrev, k.Thinking,
			k.Panels, k.Redraw, k.Help,
		}},
		{Title: "Editing the message", Keys: input.EditingKeys()},
		smp.Section(),
		insp.Section(),
	}
}
