// Package ui is vkchat's terminal chat: a bubbletea program that streams a
// reply from an Engine and shows, while it happens, how fast it runs, what
// memory it uses and which tokens the sampler chose from.
//
// A command needs only Run; *engine.Session satisfies Engine:
//
//	sess, err := engine.Load(ctx, path, opts)
//	if err != nil { ... }
//	defer sess.Close()
//	err = ui.Run(ctx, sess, ui.Config{SystemPrompt: sys, MaxTokens: n, LoadConversation: resume})
//
// The root model routes messages between components that each own their
// state, and lays the screen out: ui/conversation (the chat as data, its
// tree and save file), ui/keeper (its file and the commands on it),
// ui/input (the editor), ui/inspector (the token cursor, its keys and the
// insight panels), ui/sampler (the generation settings, their commands and
// keys), ui/prompt (/think, /prompt), ui/switcher (/model, /backend),
// ui/helppane (F1) and ui/transcript (the conversation drawn, Markdown,
// reasoning blocks and scrolling). They never import this package, so a
// change to one cannot reach back into the others through Model; what a
// component needs of the chat it asks through a Host the root implements
// (keeperHost, inspectorHost, promptHost, switchHost).
//
// Each component declares its slash commands (ui/command) and key
// sections; commands.go gathers them into the registry a typed line is
// parsed against and run through, and keytable.go into the key reference
// F1 and the README's key table show. No root method handles one named
// command.
//
// Run returns once no Generate call is running (or, if a canceled Generate
// does not return within 10s, with an error saying so), so closing the
// session afterwards is safe.
package ui

import (
	"context"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// Engine is everything the UI needs from an inference session. The UI is
// written against this interface so a fake engine drives all of its tests.
type Engine interface {
	Info() engine.ModelInfo
	// Generate produces one reply for req, blocking until done; it calls emit from its own goroutine for every event (EventPrefill, EventToken..., EventDone). Cancel ctx to stop.
	Generate(ctx context.Context, req engine.Request, emit func(engine.Event)) error
	// SetParams changes the sampler settings; the next token sampled uses them.
	SetParams(p sample.Params)
	Params() sample.Params
	// Preview re-ranks the distribution of the most recent step under p without generating; ok=false when nothing has been generated yet.
	Preview(p sample.Params) (res sample.Result, ok bool)
	Stats() engine.Stats
	// TokenText returns the raw bytes of token id's piece as a string.
	TokenText(id int32) string
	// LensAt reads the logit lens at the last of tokens (its distribution
	// predicts the next token): each layer's top k. It runs the model, so
	// the inspector calls it off the UI goroutine; a backend without the
	// lens returns an error wrapping engine.ErrNoLens.
	LensAt(ctx context.Context, tokens []int32, k int) (*engine.LensPosition, error)
}

// BackendSwitcher is implemented by engines that can move to another
// compute backend mid-conversation (the /backend command).
type BackendSwitcher interface {
	SwitchBackend(name string) error
}
