// Package input is the message editor: a bubbles/textarea wrapper that
// grows with its text, cleans and bounds pastes and keeps the history of
// sent lines.
//
// It owns its keys (editing, history, paste) and its view; the root UI
// decides when keys reach it and what a sent line does. It knows no
// command names: slash commands are parsed by the registry (ui/command)
// the components declare them in, so the editor can be tested on its own,
// without a chat or an engine behind it.
package input
