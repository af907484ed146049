package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"vkchat/runtime/arch"
	"vkchat/runtime/arch/synth"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

func init() {
	register(command{name: "synth", summary: "write a GGUF of any supported architecture with seeded random weights (for benchmarks and trying a chat)", run: runSynth})
}

func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	names := make([]string, 0, len(synth.Shapes))
	for n := range synth.Shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	fs := newFlags("synth", "--vocab VOCAB.gguf --out FILE [--arch llama] [--shape 110m] [--type Q4_0]", stderr)
	archName := fs.String("arch", "llama", "architecture: "+strings.Join(arch.Supported(), ", "))
	shape := fs.String("shape", "110m", "preset shape: "+strings.Join(names, ", ")+" (gemma4moe, nemotron_h_moe and deepseek2 bring their architecture)")
	typ := fs.String("type", "Q4_0", "matrix weight type: F32, F16, BF16, Q8_0, Q4_0 or MXFP4 (gpt-oss's expert type, here for every matrix)")
	vocab := fs.String("vocab", "", "GGUF file whose tokenizer is copied (e.g. ../shared/vocab/ggml-vocab-llama-spm.gguf)")
	out := fs.String("out", "", "output file")
	seed := fs.Uint64("seed", 1, "random seed")
	var s synth.Shape
	fs.IntVar(&s.Embd, "embd", 0, "override embedding size")
	fs.IntVar(&s.FF, "ff", 0, "override feed-forward size")
	fs.IntVar(&s.Heads, "heads", 0, "override head count")
	fs.IntVar(&s.KVHeads, "kv-heads", 0, "override KV head count")
	fs.IntVar(&s.Layers, "layers", 0, "override layer count")
	fs.IntVar(&s.HeadDim, "head-dim", 0, "head size apart from embd/heads (qwen3, gemma2, gemma3 read attention.key_length; gemma4: the full layers' size, the sliding ones half of it)")
	fs.IntVar(&s.Experts, "experts", 0, "override the expert count (gemma4: its 26B-A4B layout when there are experts)")
	fs.IntVar(&s.ExpertsUsed, "experts-used", 0, "override the experts used per token")
	fs.IntVar(&s.ExpertFF, "expert-ff", 0, "override each expert's feed-forward size")
	window := fs.Int("window", 0, "sliding window of gemma2/gemma3 (0: a quarter of the context)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, ok := synth.Shapes[*shape]
	if !ok {
		return fmt.Errorf("unknown shape %q (choose %s)", *shape, strings.Join(names, ", "))
	}
	for _, o := range []struct {
		dst *int
		v   int
	}{{&base.Embd, s.Embd}, {&base.FF, s.FF}, {&base.Heads, s.Heads}, {&base.KVHeads, s.KVHeads}, {&base.Layers, s.Layers}, {&base.HeadDim, s.HeadDim},
		{&base.Experts, s.Experts}, {&base.ExpertsUsed, s.ExpertsUsed}, {&base.ExpertFF, s.ExpertFF}} {
		if o.v > 0 {
			*o.dst = o.v
		}
	}
	// a preset laid out for one architecture picks it unless --arch says
	// otherwise (which synth.Write then refuses, naming both)
	archSet := false
	fs.Visit(func(f *flag.Flag) { archSet = archSet || f.Name == "arch" })
	if !archSet && base.Arch != "" {
		*archName = base.Arch
	}
	t, err := ggml.ParseType(*typ)
	if err != nil {
		return err
	}
	if *vocab == "" || *out == "" {
		fs.Usage()
		return fmt.Errorf("--vocab and --out are required")
	}
	vf, err := gguf.Open(*vocab)
	if err != nil {
		return err
	}
	defer vf.Close()
	if err := synth.Write(*out, base, synth.Options{Arch: *archName, Type: t, Vocab: vf, Seed: *seed, Window: *window}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%s, %+v, %s)\n", *out, *archName, base, t)
	return nil
}
