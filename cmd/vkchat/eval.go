package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

func init() {
	register(command{name: "eval", summary: "greedy evaluation dumping top-k logits per position (llama.cpp reference format)", run: runEval})
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", "--model FILE --prompt TEXT -n N [--top K] [--lens | --mtp] [--json]", stderr)
	var ef engineFlags
	ef.register(fs)
	prompt := fs.String("prompt", "Once upon a time", "prompt text")
	n := fs.Int("n", 32, "tokens to generate greedily")
	top := fs.Int("top", 10, "candidates recorded per position")
	asJSON := fs.Bool("json", false, "print JSON in the shape of shared/reference/*.json")
	lens := fs.Bool("lens", false, "the logit lens instead: every layer's top K at every prompt position (-n is not used; JSON in the shape of shared/reference/lens/*.json)")
	mtp := fs.Bool("mtp", false, "also the model's MTP (NextN) head: each step's token, next token and the head's top K drafting the token after (JSON in the shape of shared/reference/2026b/synth-qwen35mtp-*.json)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkCount("n", *n, "the prompt only"); err != nil {
		return err
	}
	ef.template = "none"
	s, err := ef.load(ctx, sample.Params{})
	if err != nil {
		return err
	}
	defer s.Close()
	if *lens {
		return printLens(ctx, s, *prompt, *top, *asJSON, stdout)
	}
	evaluate := s.Evaluate
	if *mtp {
		evaluate = s.EvaluateMTP
	}
	res, err := evaluate(ctx, *prompt, *n, *top)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "prompt tokens: %v\n", res.PromptTokens)
	fmt.Fprintf(stdout, "greedy: %v\n", res.Greedy)
	fmt.Fprintf(stdout, "text: %q\n", res.Text)
	return nil
}

// printLens prints the logit lens of prompt: JSON, or per position the
// token, the layer where the answer settled and each layer's top-1.
func printLens(ctx context.Context, s *engine.Session, prompt string, top int, asJSON bool, stdout io.Writer) error {
	res, err := s.EvaluateLens(ctx, prompt, top)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	fmt.Fprintf(stdout, "prompt tokens: %v\n", res.PromptTokens)
	for _, p := range res.Positions {
		fmt.Fprintf(stdout, "pos %d token %d: settles at layer %d of %d; top-1 by layer %v\n", p.Pos, p.Token, p.SettleLayer, res.Layers, p.Top1ByLayer)
	}
	return nil
}
