// Package keeper keeps the chat's conversation (ui/conversation) in its
// file and owns the commands that change, save, load or take text out of
// it: /system, /clear (/new), /save, /load, /chats, /export, /edit and
// /copy. It autosaves after every turn, retries a failed save on a timer,
// refuses to replace a chat whose last save failed, and writes what /copy
// takes to the clipboard (OSC 52 and the system clipboard, clipboard.go).
//
// What the commands need of the chat around them (the status line, the
// reply in progress, the inspected reply, the editor) it asks of a Host the
// root implements; it never imports the root. The conversation package
// itself stays free of bubbletea: the domain is tested without a terminal,
// this package is where it meets the UI.
package keeper
