// Package helppane is the pane that takes the transcript's place when F1
// is pressed: every key, from the key sections the components declare,
// and every slash command, from the command registry (ui/command), so
// neither list can drift from what the chat answers to. /prompt and /chats
// show what they found in it too (prompt.go, chats.go). It owns /help.
//
// The root gathers its Content (the key reference, the registry, where
// chats are saved) and routes F1, esc and the scroll keys to it.
package helppane
