package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"vkchat/ui"
	"vkchat/ui/picker"
)

func init() {
	register(command{name: "chat", summary: "chat with a model in the terminal UI (the default command)", run: runChat})
}

func runChat(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("chat", "--model FILE [flags]", stderr)
	var ef engineFlags
	ef.register(fs)
	params := samplerFlags(fs)
	var cfg ui.Config
	fs.StringVar(&cfg.SystemPrompt, "system", "", "system prompt")
	fs.IntVar(&cfg.MaxTokens, "n", 0, "maximum tokens per reply (0: until the model stops)")
	fs.StringVar(&cfg.LoadConversation, "load", "", "resume a saved conversation (JSON)")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "where conversations are saved (default $XDG_STATE_HOME/vkchat)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if ef.model == "" {
		if !isTerminal(os.Stdin) {
			return fmt.Errorf("no model: pass --model FILE (a GGUF file), e.g. vkchat chat --model ../shared/models/stories260K.gguf")
		}
		// No model named: pick a local one, or pull the default.
		path, err := picker.Run(ctx, picker.Options{})
		if errors.Is(err, picker.ErrCanceled) {
			return nil
		}
		if err != nil {
			return err
		}
		ef.model = path
	}
	fmt.Fprintf(stderr, "loading %s on %s...\n", ef.model, ef.backend)
	s, err := ef.load(ctx, *params)
	if err != nil {
		return err
	}
	defer s.Close()
	return ui.Run(ctx, s, cfg)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
