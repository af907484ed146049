package main

import (
	"context"
	"fmt"
	"io"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
)

func init() {
	register(command{name: "run", summary: "continue a prompt, printing the text and timings", run: runRun})
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "--model FILE --prompt TEXT [flags]", stderr)
	var ef engineFlags
	ef.register(fs)
	prompt := fs.String("prompt", "Once upon a time", "prompt text (used as plain text, no chat template)")
	n := fs.Int("n", 128, "tokens to generate")
	params := samplerFlags(fs, false)
	logprobs := fs.String("logprobs", "", "write every token's log-probability and top alternatives to this JSON Lines `FILE` (see vkchat replay)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkSampler(params); err != nil {
		return err
	}
	if err := checkCount("n", *n, "until the model stops"); err != nil {
		return err
	}
	if ef.template == "" {
		ef.template = "none" // run is plain completion; chat applies templates
	}
	s, err := ef.load(ctx, *params)
	if err != nil {
		return err
	}
	defer s.Close()
	if warn := s.Info().ContextWarning(); warn != "" {
		fmt.Fprintln(stderr, "warning: "+warn)
	}
	var prefill *engine.PrefillInfo
	var last engine.Event
	var spec *engine.SpecMark // the last token's speculation, with the reply's totals
	req := engine.Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: *prompt}}, MaxTokens: *n}
	export, err := openExport(*logprobs, s, req)
	if err != nil {
		return err
	}
	err = s.Generate(ctx, req,
		func(ev engine.Event) {
			last = ev
			switch ev.Kind {
			case engine.EventPrefill:
				prefill = ev.Prefill
			case engine.EventToken:
				if ev.Token.Spec != nil {
					spec = ev.Token.Spec
				}
				export.token(*ev.Token)
				// Model output may hold terminal escapes (OSC 52
				// clipboard writes, resets): print it defanged.
				fmt.Fprint(stdout, termtext.Sanitize(ev.Token.Piece))
			}
		})
	fmt.Fprintln(stdout)
	if cerr := export.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	info := s.Info()
	fmt.Fprintf(stderr, "model: %s (%s, %s) on %s [%s]\n", printable(info.Name), info.Arch, info.FileType, info.Backend, info.Device)
	fmt.Fprintf(stderr, "load: %.1f ms\n", ms(info.LoadTime))
	if prefill != nil && prefill.Duration > 0 {
		fmt.Fprintf(stderr, "prefill: %d tokens in %.1f ms (%.1f tok/s)\n", prefill.Tokens, ms(prefill.Duration),
			float64(prefill.Tokens)/prefill.Duration.Seconds())
	}
	if d := last.Done; d != nil {
		rate := 0.0
		if d.Decode > 0 && d.Generated > 1 {
			rate = float64(d.Generated-1) / d.Decode.Seconds()
		}
		fmt.Fprintf(stderr, "decode: %d tokens, %.1f tok/s (stop: %s)\n", d.Generated, rate, d.Reason)
	}
	if spec != nil {
		t := spec.Totals
		fmt.Fprintf(stderr, "spec %s: %d verifications, %d drafted, %d accepted (%.0f%%), %.2f tokens per verification\n",
			spec.Source, t.Rounds, t.Drafted, t.Accepted, 100*t.AcceptRate(), t.PerRound())
	}
	st := last.Stats
	fmt.Fprintf(stderr, "kv cache: %d / %d bytes (%d of %d positions, %d bytes each)\n",
		st.KVUsed, st.KVAllocated, st.ContextUsed, st.ContextSize, st.KVPerToken)
	return nil
}
