// Package conversation is the chat as data: its turns and what a session
// learned while generating them (tokens, per-token detail, reasoning
// blocks), the tree that forks and regenerated replies grow, the save file
// (JSON, written atomically, with a retry state for failed autosaves) and
// the logprob export of a reply.
//
// It knows nothing of screens: no bubbletea, lipgloss or glamour. Keeping
// the domain apart means a change to how a turn is drawn cannot break how
// it is saved, and the tree and the save format are tested without a
// terminal. Operations report errors and values; the root UI decides what
// the status line says about them. Render caches live with the renderer
// (ui/transcript), keyed by *Turn, for the same reason.
package conversation
