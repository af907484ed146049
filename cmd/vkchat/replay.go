package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"vkchat/runtime/backend"
	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
)

func init() {
	register(command{name: "replay", summary: "re-run a --logprobs export and check that every token reproduces", run: runReplay})
}

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", "[--model FILE] [--threads N] EXPORT.jsonl", stderr)
	model := fs.String("model", "", "model file (default: the path the export recorded; its SHA-256 must match)")
	threads := fs.Int("threads", 0, "CPU threads (0: all cores)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("want exactly one export file")
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	h, toks, err := engine.ReadLogprobs(f, path)
	f.Close()
	if err != nil {
		return err
	}
	if len(toks) == 0 {
		return fmt.Errorf("%s: no token lines: nothing to replay", path)
	}
	if *model == "" {
		*model = h.Model
	}
	sum, err := engine.FileSHA256(*model)
	if err != nil {
		return err
	}
	if h.ModelSHA256 != "" && sum != h.ModelSHA256 {
		return fmt.Errorf("%s has SHA-256 %s but %s was recorded with %s (%s): not the same model", *model, sum, path, h.ModelSHA256, h.Model)
	}
	s, err := engine.Load(ctx, *model, engine.Options{Backend: h.Backend, ContextSize: h.Context, Threads: *threads, Device: -1,
		KVType: backend.KVType(h.KVType), Params: h.Params.Sample(), Template: h.Template})
	if err != nil {
		return err
	}
	defer s.Close()
	if len(h.SamplerState) > 0 {
		if err := s.SetSamplerState(h.SamplerState); err != nil {
			return fmt.Errorf("%s: field \"sampler_state\": %w", path, err)
		}
	}
	msgs := h.Messages
	if h.Template == "none" || len(msgs) == 0 {
		msgs = []chat.Message{{Role: chat.RoleUser, Content: h.Prompt}}
	}
	got, err := replayTokens(ctx, s, msgs, toks)
	if err != nil {
		return err
	}
	text := func(id int32) string { return termtext.Visible(s.TokenText(id)) }
	for i, want := range toks {
		if i >= len(got) {
			return fmt.Errorf("replay ended after %d tokens; the export has %d (token %d was %d %q)", len(got), len(toks), i, want.ID, text(want.ID))
		}
		g := got[i]
		if g.ID != want.ID {
			return fmt.Errorf("token %d differs: recorded %d %q (logprob %.6f), replay %d %q (logprob %.6f)",
				i, want.ID, text(want.ID), want.Logprob, g.ID, text(g.ID), g.LogProb)
		}
		if g.LogProb != want.Logprob {
			return fmt.Errorf("token %d (%d %q) is the same but its logprob differs: recorded %v, replay %v (Δ %.3g)",
				i, want.ID, text(want.ID), want.Logprob, g.LogProb, g.LogProb-want.Logprob)
		}
	}
	fmt.Fprintf(stdout, "replay: all %d tokens and logprobs match (%s on %s, model sha256 %s…)\n", len(toks), termtext.Sanitize(*model), s.Info().Backend, sum[:12])
	return nil
}

// replayTokens generates as the export did: sampled stretches in between
// the tokens a user forced, each fork continuing from the recorded prefix.
func replayTokens(ctx context.Context, s *engine.Session, msgs []chat.Message, toks []engine.LogprobToken) ([]engine.TokenInfo, error) {
	var got []engine.TokenInfo
	start := 0
	for start < len(toks) {
		end := start + 1
		for end < len(toks) && !toks[end].Forced {
			end++
		}
		req := engine.Request{Messages: msgs, MaxTokens: end}
		if toks[start].Forced {
			prefix := make([]int32, start)
			for i := range prefix {
				prefix[i] = toks[i].ID
			}
			req.Fork = &engine.ForkPoint{Prefix: prefix, Token: toks[start].ID}
		} else if start > 0 {
			return nil, fmt.Errorf("token %d: a stretch may only start at a forced token", start)
		}
		n := len(got)
		err := s.Generate(ctx, req, func(ev engine.Event) {
			if ev.Kind == engine.EventToken {
				got = append(got, *ev.Token)
			}
		})
		if err != nil {
			return got, err
		}
		if len(got)-n < end-start {
			return got, nil // ended early: the caller reports where
		}
		start = end
	}
	return got, nil
}
