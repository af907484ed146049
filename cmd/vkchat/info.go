package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/engine"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
	"vkchat/runtime/plan"
	"vkchat/runtime/tokenizer"
)

func init() {
	register(command{name: "info", summary: "describe and validate a GGUF model file", run: runInfo})
}

func runInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("info", "--model FILE|demo [--ctx N] [--kv-type T] [--plan]   (or: vkchat info FILE [flags])", stderr)
	modelFlag := fs.String("model", "", "GGUF model file, or demo for the model built into vkchat (the file may also be given alone, before or after the flags)")
	ctxSize := new(int)
	contextFlag(fs, ctxSize, "context size in `N` tokens for the memory estimate (0: what the chat would use, the model's trained context up to 4096)")
	kvType := fs.String("kv-type", "f16", "the KV cache's type for the estimate: f16, f32, q8_0, q5_1, q5_0, q4_1, q4_0 or iq4_nl (as chat's --kv-type)")
	kvTypeK := fs.String("kv-type-k", "", "the keys' type, in place of --kv-type's")
	kvTypeV := fs.String("kv-type-v", "", "the values' type, in place of --kv-type's")
	showPlan := fs.Bool("plan", false, "also print the op plan both backends execute: the input, a group of ops per layer, the head, the cache and state slots")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	ref := *modelFlag
	switch {
	case ref != "" && len(files) > 0:
		return fmt.Errorf("--model %s and %s both name a model: give one", printable(ref), printable(strings.Join(files, " ")))
	case len(files) == 1:
		ref = files[0]
	case len(files) > 1:
		fs.Usage()
		return fmt.Errorf("expected one model file, got %d: %s", len(files), printable(strings.Join(files, " ")))
	case ref == "":
		fs.Usage()
		return fmt.Errorf("no model: pass --model FILE (or demo)")
	}
	path, err := modelPath(ref)
	if err != nil {
		return err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := arch.Load(f)
	if err != nil {
		return err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return err
	}
	if tok.VocabSize() != m.TokenEmbd.Rows {
		return fmt.Errorf("%s: tensor \"token_embd.weight\": %d rows but the vocabulary has %d tokens", f.Path, m.TokenEmbd.Rows, tok.VocabSize())
	}
	tmpl, _, err := f.String("tokenizer.chat_template")
	if err != nil {
		return err
	}
	w := func(k, format string, a ...any) { fmt.Fprintf(stdout, "%-16s %s\n", k+":", fmt.Sprintf(format, a...)) }
	w("file", "%s (GGUF v%d, %s)", printable(f.Path), f.Version, humanBytes(int64(f.Size())))
	w("name", "%s", printable(m.Name))
	w("architecture", "%s", m.Arch)
	w("parameters", "%s (%d)", humanCount(m.Params()), m.Params())
	w("tensor types", "%s", tensorTypes(f))
	w("layers", "%d (embd %d, ff %d, heads %d, kv heads %d, head dim %d)", m.Config.Layers, m.Embd, m.FF, m.Heads, m.KVHeads, m.HeadDim)
	rope := fmt.Sprintf("dims %d of %d, base %g, %s pairs", m.Rope.Dims, m.HeadDim, m.Rope.Base, map[bool]string{true: "neox", false: "normal"}[m.Rope.NeoX])
	switch y := m.Rope.YaRN; {
	case y != nil:
		rope += fmt.Sprintf(", YaRN ×%g from an original context of %d (blend over pairs %g–%g, cos/sin ×%.4g)", m.Rope.Scale, m.Rope.OrigCtx, y.Low, y.High, y.MScale)
	case m.Rope.Scale != 1:
		rope += fmt.Sprintf(", positions ×%g", m.Rope.Scale)
	}
	if m.Rope.AttnFactor != 1 {
		rope += fmt.Sprintf(", cos/sin ×%g", m.Rope.AttnFactor)
	}
	if m.Rope.LongFactors != nil || m.Rope.FreqFactors != nil {
		rope += ", per-pair frequency factors"
	}
	w("rope", "%s", rope)
	for _, f := range archFeatures(m) {
		w(f[0], "%s", f[1])
	}
	w("context length", "%d (trained)", m.TrainCtx)
	model, _, _ := f.String("tokenizer.ggml.model")
	w("vocabulary", "%d tokens (%s), bos %d, eos %d", tok.VocabSize(), printable(model), tok.BOS(), tok.EOS())
	if tmpl != "" {
		w("chat template", "present (%d bytes)", len(tmpl))
	} else {
		w("chat template", "none (completion mode)")
	}
	if *ctxSize <= 0 {
		// The window engine.Load opens without --ctx.
		*ctxSize = min(m.TrainCtx, engine.DefaultContext)
	}
	if warn := (engine.ModelInfo{ContextSize: *ctxSize, TrainContext: m.TrainCtx}).ContextWarning(); warn != "" {
		fmt.Fprintln(stderr, "warning: "+warn)
	}
	p, err := plan.Resolve(m, *ctxSize)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	kt, vt := backend.KVType(cmp.Or(*kvTypeK, *kvType)), backend.KVType(cmp.Or(*kvTypeV, *kvType))
	if err := p.CheckCacheTypes(kt, vt); err != nil {
		return fmt.Errorf("%s: --kv-type: %w", f.Path, err)
	}
	kv := p.CacheBytes(kt, vt, p.Context, 0)
	if st := m.StateBytes(); st > 0 {
		w("memory", "weights %s + KV cache %s at ctx %d + recurrent state %s = %s",
			humanBytes(m.WeightBytes()), humanBytes(kv), *ctxSize, humanBytes(st), humanBytes(m.WeightBytes()+kv+st))
	} else {
		w("memory", "weights %s + KV cache %s at ctx %d = %s",
			humanBytes(m.WeightBytes()), humanBytes(kv), *ctxSize, humanBytes(m.WeightBytes()+kv))
	}
	w("KV cache", "%s: %s", backend.KVName(kt, vt), p.CacheFormula(kt, vt, 0))
	if kt != backend.KVF16 || vt != backend.KVF16 {
		w("KV in f16", "%s, for comparison", humanBytes(p.CacheBytes(backend.KVF16, backend.KVF16, p.Context, 0)))
	}
	stateInfo(w, m)
	if *showPlan {
		fmt.Fprintln(stdout)
		// tensor names come from the file: escaped as the metadata is
		for _, line := range strings.Split(strings.TrimSuffix(p.String(), "\n"), "\n") {
			fmt.Fprintln(stdout, printable(line))
		}
	}
	return nil
}

func tensorTypes(f *gguf.File) string {
	count := map[ggml.Type]int{}
	for i := range f.Tensors {
		count[f.Tensors[i].Type]++
	}
	var parts []string
	for t, n := range count {
		parts = append(parts, fmt.Sprintf("%s×%d", t, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// printable escapes control characters so metadata from a hostile file
// cannot drive the terminal (OSC 52 clipboard writes, resets).
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
