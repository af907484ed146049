package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"vkchat/models/demo"
	"vkchat/models/store"
	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
	"vkchat/ui"
	"vkchat/ui/picker"
)

func init() {
	register(command{name: "chat", summary: "chat with a model in the terminal UI (the default command)", run: runChat})
}

// demoNotice is the chat's first status line on the demo model: what it is
// and how to get a model that chats.
// It must fit the status line whole at 80 columns and in the wide layout's
// narrowest main column (TestDemoNoticeFits).
const demoNotice = "demo model (tiny stories) · real chat: vkchat pull"

func runChat(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("chat", "--model FILE|demo [flags]", stderr)
	var ef engineFlags
	ef.register(fs)
	params := samplerFlags(fs, true)
	var cfg ui.Config
	fs.StringVar(&cfg.SystemPrompt, "system", "", "system prompt")
	think := fs.Bool("think", true, "enable_thinking for thinking models (--think=false: no reasoning; /think on|off in the chat)")
	effort := fs.String("reasoning-effort", "", "reasoning_effort for templates that read it (gpt-oss): low, medium or high; /think low|medium|high in the chat")
	fs.IntVar(&cfg.MaxTokens, "n", 0, "maximum tokens per reply (0: until the model stops)")
	fs.StringVar(&cfg.LoadConversation, "load", "", "resume a saved conversation (JSON)")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "where conversations are saved (default $XDG_STATE_HOME/vkchat)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkSampler(params); err != nil {
		return err
	}
	if err := checkCount("n", cfg.MaxTokens, "until the model stops"); err != nil {
		return err
	}
	seedPerRun(fs, params, rand.Uint64)
	cfg.NoThinking = !*think
	if err := chat.CheckReasoningEffort(*effort); err != nil {
		return fmt.Errorf("--reasoning-effort: %w", err)
	}
	cfg.ReasoningEffort = *effort
	if ef.model == "" {
		if !isTerminal(os.Stdin) {
			return fmt.Errorf("no model: pass --model FILE (a GGUF file), or --model demo for the model built into vkchat")
		}
		ref, err := firstRun(ctx, firstRunEnv{
			stored:    storedModels,
			reachable: func(ctx context.Context) bool { return hubReachable(ctx, hubEndpoint(), probeTimeout) },
			pick:      picker.Run,
		})
		if errors.Is(err, picker.ErrCanceled) {
			return nil
		}
		if err != nil {
			return err
		}
		ef.model = ref
	}
	if demo.IsRef(ef.model) {
		cfg.Notice = demoNotice
	}
	fmt.Fprintf(stderr, "loading %s on %s...\n", ef.model, ef.backend)
	s, err := ef.load(ctx, *params)
	if err != nil {
		return err
	}
	defer s.Close()
	cfg.OpenModel = func(ctx context.Context, ref string) (ui.Engine, error) {
		return openAnother(ctx, ef, ref, *params)
	}
	cfg.Picker = picker.Options{Demo: true}
	return ui.Run(ctx, s, cfg)
}

// openAnother is /model REF: a file, demo, or a name in the model store
// (as vkchat rm and the picker name them), loaded with the chat's other
// flags. The chat closes the session it leaves.
func openAnother(ctx context.Context, ef engineFlags, ref string, p sample.Params) (ui.Engine, error) {
	if _, err := os.Stat(ref); err != nil && !demo.IsRef(ref) {
		models, lerr := store.List()
		if lerr != nil {
			return nil, fmt.Errorf("%s: no such file, and the model store cannot be read: %w", ref, lerr)
		}
		m, ferr := store.Find(models, ref)
		if ferr != nil {
			return nil, fmt.Errorf("%s: no such file; %w", ref, ferr)
		}
		ref = m.Path
	}
	ef.model = ref
	s, err := ef.load(ctx, p)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// seedPerRun draws the chat's seed unless --seed gave one, as llama.cpp
// does, so the same message gets a new reply in each run; the sampler
// panel shows it and /seed N (or --seed N) fixes it.
func seedPerRun(fs *flag.FlagSet, p *sample.Params, draw func() uint64) {
	if !flagSet(fs, "seed") {
		p.Seed = draw()
	}
}

// firstRunEnv is what the first-run choice looks at, replaceable in tests.
type firstRunEnv struct {
	stored    func() int                     // usable models in the store
	reachable func(ctx context.Context) bool // can the Hub be reached now?
	pick      func(ctx context.Context, opts picker.Options) (string, error)
}

// firstRun picks the model when none was named. Stored models: the picker
// lists them. An empty store: with the Hub reachable, the picker offers the
// default model (the demo is one key away); without it, the demo opens at
// once, since a download offer that can only fail would be a dead end.
func firstRun(ctx context.Context, env firstRunEnv) (string, error) {
	if env.stored() == 0 && !env.reachable(ctx) {
		return demo.Ref, nil
	}
	return env.pick(ctx, picker.Options{Demo: true})
}

// storedModels counts the usable models in the store.
func storedModels() int {
	models, err := store.ListDir(store.Dir())
	if err != nil {
		return 0
	}
	n := 0
	for _, m := range models {
		if m.Err == nil {
			n++
		}
	}
	return n
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
