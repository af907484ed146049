package ui

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"vkchat/ui/picker"
)

// Config is how a command sets the chat up.
type Config struct {
	// SystemPrompt starts every chat (ignored in completion mode).
	SystemPrompt string
	// MaxTokens caps each reply; 0 lets the model end its turn or fill the context.
	MaxTokens int
	// StateDir is where conversations are saved (in its "conversations"
	// folder); "" means DefaultStateDir().
	StateDir string
	// LoadConversation is a saved conversation to resume; "" starts afresh.
	LoadConversation string
	// NoThinking starts the chat with enable_thinking=false, as /think off
	// does (a thinking model's template then asks for no reasoning).
	NoThinking bool
	// ReasoningEffort is the template's reasoning_effort at start, as
	// /think low|medium|high sets it; "" leaves it unset.
	ReasoningEffort string
	// Notice is shown in the status line when the chat opens (the demo
	// model says what it is and how to get a real one).
	Notice string
	// OpenModel loads another model for /model (a path, a name in the
	// model store, or anything the command's --model takes), with the
	// command's other flags; nil means /model is not offered. It runs off
	// the UI's goroutine and must return once ctx is done.
	OpenModel func(ctx context.Context, ref string) (Engine, error)
	// Picker configures the model picker /model opens without a name
	// (the zero value lists the model store).
	Picker picker.Options
	// Input and Output replace the terminal (tests, embedding); nil uses
	// stdin and stdout.
	Input  io.Reader
	Output io.Writer
}

// DefaultStateDir is $XDG_STATE_HOME/vkchat, or ~/.local/state/vkchat when
// XDG_STATE_HOME is unset or not absolute (the XDG spec says to ignore
// relative values).
func DefaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "vkchat")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "state", "vkchat")
	}
	return filepath.Join(os.TempDir(), "vkchat-state")
}

// conversationsDir is where a Config's conversations go.
func (c Config) conversationsDir() string {
	d := c.StateDir
	if d == "" {
		d = DefaultStateDir()
	}
	return filepath.Join(d, "conversations")
}
