// Package input is the message editor and what is typed into it: a
// bubbles/textarea wrapper that grows with its text, cleans and bounds
// pastes and keeps the history of sent lines, and the parser of slash
// commands with the one table the help screen also lists.
//
// It owns its keys (editing, history, paste) and its view; the root UI
// decides when keys reach it and what a sent line or a parsed command
// does, so the editor can be tested on its own, without a chat or an
// engine behind it.
package input
