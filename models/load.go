package models

import (
	"fmt"
	"math"
	"strings"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// Load reads the hyper-parameters and locates every weight of a llama-family
// model, checking each tensor's presence, type and shape so that the
// backends can trust them.
func Load(f *gguf.File) (*Model, error) {
	name, err := f.Architecture()
	if err != nil {
		return nil, err
	}
	a, err := lookupArch(f.Path, name)
	if err != nil {
		// Not a malformed file, so not a FormatError, but named by its key
		// like every other complaint about the metadata (%q escapes it).
		return nil, fmt.Errorf("%s: key \"general.architecture\": architecture %q is not supported (supported: %s)",
			f.Path, name, strings.Join(Supported(), ", "))
	}
	cfg, err := loadConfig(f, a)
	if err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, File: f}
	m.Name, _, _ = f.String("general.name")
	w := weights{f: f}
	m.TokenEmbd = w.matrix("token_embd.weight", cfg.Embd, cfg.Vocab)
	m.OutputNorm = w.vector("output_norm.weight", cfg.Embd)
	if _, ok := f.Tensor("output.weight"); ok {
		m.Output = w.matrix("output.weight", cfg.Embd, cfg.Vocab)
	} else {
		m.Output, m.Tied = m.TokenEmbd, true
	}
	q, kv := cfg.Heads*cfg.HeadDim, cfg.KVHeads*cfg.HeadDim
	// Every architecture has at least perLayer tensors in each layer:
	// checking that before allocating keeps a block_count of 10^6 in a tiny
	// file from costing 10^6 Layer structs (600 MB) on the way to "tensor
	// missing". (Qwen2's three biases are left to the per-tensor check,
	// which names the one that is missing.)
	const perLayer = 9
	if cfg.Layers > len(f.Tensors)/perLayer {
		msg := fmt.Sprintf("%d layers need at least %d tensors, the file has %d", cfg.Layers, cfg.Layers*perLayer, len(f.Tensors))
		// Point at the first layer that is not there (an off-by-one
		// block_count is the common case); the search is bounded by the
		// tensor count, not by the claim.
		for i := 0; i <= len(f.Tensors)/perLayer; i++ {
			name := fmt.Sprintf("blk.%d.attn_norm.weight", i)
			if _, ok := f.Tensor(name); !ok {
				msg += fmt.Sprintf(" (there is no tensor %q)", name)
				break
			}
		}
		return nil, &gguf.FormatError{Path: f.Path, Field: fmt.Sprintf("key %q", a.Name+".block_count"), Msg: msg}
	}
	m.Layers = make([]Layer, cfg.Layers)
	for i := range m.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		l := &m.Layers[i]
		l.AttnNorm = w.vector(p+"attn_norm.weight", cfg.Embd)
		l.Wq = w.matrix(p+"attn_q.weight", cfg.Embd, q)
		l.Wk = w.matrix(p+"attn_k.weight", cfg.Embd, kv)
		l.Wv = w.matrix(p+"attn_v.weight", cfg.Embd, kv)
		l.Wo = w.matrix(p+"attn_output.weight", q, cfg.Embd)
		if a.QKVBias == Required {
			bq, bk, bv := w.vector(p+"attn_q.bias", q), w.vector(p+"attn_k.bias", kv), w.vector(p+"attn_v.bias", kv)
			l.Bq, l.Bk, l.Bv = &bq, &bk, &bv
		}
		l.FFNNorm = w.vector(p+"ffn_norm.weight", cfg.Embd)
		l.Gate = w.matrix(p+"ffn_gate.weight", cfg.Embd, cfg.FF)
		l.Up = w.matrix(p+"ffn_up.weight", cfg.Embd, cfg.FF)
		l.Down = w.matrix(p+"ffn_down.weight", cfg.FF, cfg.Embd)
	}
	if w.err != nil {
		return nil, w.err
	}
	if ff, ok := f.Tensor("rope_freqs.weight"); ok {
		rf := w.vector("rope_freqs.weight", cfg.Rope.Dims/2)
		if w.err != nil {
			return nil, w.err
		}
		if ff.Type != ggml.F32 {
			return nil, tensorErr(f, ff.Name, fmt.Sprintf("must be F32, found %s", ff.Type))
		}
		m.Rope.FreqFactors = make([]float32, cfg.Rope.Dims/2)
		for i := range m.Rope.FreqFactors {
			m.Rope.FreqFactors[i] = math.Float32frombits(le32(rf.Data[4*i:]))
		}
	}
	return m, nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func loadConfig(f *gguf.File, a Arch) (Config, error) {
	l := &loader{f: f, arch: a.Name}
	c := Config{Arch: a.Name}
	c.Embd = l.uint("embedding_length", 0, true)
	c.FF = l.uint("feed_forward_length", 0, true)
	c.Layers = l.uint("block_count", 0, true)
	c.Heads = l.uint("attention.head_count", 0, true)
	c.KVHeads = l.uint("attention.head_count_kv", c.Heads, false)
	c.TrainCtx = l.uint("context_length", 2048, false)
	c.NormEps = l.float("attention.layer_norm_rms_epsilon", 1e-5)
	c.Rope.Base = l.float("rope.freq_base", 10000)
	c.Rope.NeoX = a.NeoX
	c.Rope.Scale = 1
	if l.err != nil {
		return c, l.err
	}
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: f.Path, Field: fmt.Sprintf("key %q", a.Name+"."+key), Msg: msg}
	}
	switch {
	case c.Embd == 0:
		return c, bad("embedding_length", "must be positive")
	case c.Layers == 0:
		return c, bad("block_count", "must be positive")
	case c.Heads == 0 || c.Embd%c.Heads != 0:
		return c, bad("attention.head_count", fmt.Sprintf("%d does not divide embedding_length %d", c.Heads, c.Embd))
	case c.KVHeads == 0 || c.Heads%c.KVHeads != 0:
		return c, bad("attention.head_count_kv", fmt.Sprintf("%d does not divide head_count %d", c.KVHeads, c.Heads))
	case c.FF == 0:
		return c, bad("feed_forward_length", "must be positive")
	case !(c.NormEps > 0) || c.NormEps > 1:
		return c, bad("attention.layer_norm_rms_epsilon", fmt.Sprintf("%g is not a small positive number", c.NormEps))
	case !(c.Rope.Base > 0) || math.IsInf(float64(c.Rope.Base), 0):
		return c, bad("rope.freq_base", fmt.Sprintf("%g must be positive", c.Rope.Base))
	}
	c.HeadDim = c.Embd / c.Heads
	if kl := l.uint("attention.key_length", c.HeadDim, false); kl != c.HeadDim {
		return c, bad("attention.key_length", fmt.Sprintf("%d differs from embedding_length/head_count %d, which is not supported", kl, c.HeadDim))
	}
	c.Rope.Dims = l.uint("rope.dimension_count", c.HeadDim, false)
	if c.Rope.Dims == 0 || c.Rope.Dims > c.HeadDim || c.Rope.Dims%2 != 0 {
		return c, bad("rope.dimension_count", fmt.Sprintf("%d must be even and at most the head size %d", c.Rope.Dims, c.HeadDim))
	}
	if st, ok, _ := f.String(a.Name + ".rope.scaling.type"); ok && st == "linear" {
		fac := l.float("rope.scaling.factor", 1)
		if l.err != nil {
			return c, l.err
		}
		// A zero, negative, NaN or infinite factor would collapse or
		// scramble every position.
		if !(fac > 0) || math.IsInf(float64(fac), 0) {
			return c, bad("rope.scaling.factor", fmt.Sprintf("%g must be a positive number", fac))
		}
		c.Rope.Scale = 1 / fac
	}
	tokens, ok, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return c, err
	}
	if ok {
		if len(tokens) == 0 {
			return c, &gguf.FormatError{Path: f.Path, Field: `key "tokenizer.ggml.tokens"`, Msg: "the vocabulary is empty"}
		}
		if err := checkVocab(f, len(tokens)); err != nil {
			return c, err
		}
		c.Vocab = len(tokens)
		// Say which two things disagree; the generic shape message below
		// would leave the reader to work out that the vocabulary is one.
		if t, ok := f.Tensor("token_embd.weight"); ok && len(t.Dims) == 2 && t.Dims[0] == uint64(c.Embd) && t.Dims[1] != uint64(c.Vocab) {
			return c, tensorErr(f, t.Name, fmt.Sprintf("has %d rows but the vocabulary (tokenizer.ggml.tokens) has %d tokens", t.Dims[1], c.Vocab))
		}
	}
	if c.Vocab == 0 {
		// Without a vocabulary the embedding's row count is the vocab size.
		if t, ok := f.Tensor("token_embd.weight"); ok && len(t.Dims) == 2 {
			c.Vocab = int(t.Dims[1])
		}
	}
	return c, l.err
}

// checkVocab checks the per-token arrays and special-token ids against the
// vocabulary size n. A tokenizer indexes scores[id] and token_type[id] for
// every id < n and takes the special ids as indexes too: a short array, one
// of another element type (scores as UINT8) or an id past the end is an
// out-of-bounds read in loaders that trust them.
func checkVocab(f *gguf.File, n int) error {
	if _, ok, err := f.Float32s("tokenizer.ggml.scores"); err != nil {
		return err
	} else if a, _, _ := f.Array("tokenizer.ggml.scores"); ok && a.Len() != n {
		return &gguf.FormatError{Path: f.Path, Field: `key "tokenizer.ggml.scores"`, Msg: fmt.Sprintf("has %d entries for %d tokens", a.Len(), n)}
	}
	if _, ok, err := f.Int32s("tokenizer.ggml.token_type"); err != nil {
		return err
	} else if a, _, _ := f.Array("tokenizer.ggml.token_type"); ok && a.Len() != n {
		return &gguf.FormatError{Path: f.Path, Field: `key "tokenizer.ggml.token_type"`, Msg: fmt.Sprintf("has %d entries for %d tokens", a.Len(), n)}
	}
	if _, _, err := f.Strings("tokenizer.ggml.merges"); err != nil {
		return err
	}
	for _, kv := range f.KVs {
		if !strings.HasPrefix(kv.Key, "tokenizer.ggml.") || !strings.HasSuffix(kv.Key, "_token_id") {
			continue
		}
		id, _, err := f.Uint(kv.Key)
		if err != nil {
			return err
		}
		// Converters write 0xFFFFFFFF (-1) for "no such token".
		if id != math.MaxUint32 && id >= uint64(n) {
			return &gguf.FormatError{Path: f.Path, Field: fmt.Sprintf("key %q", kv.Key), Msg: fmt.Sprintf("token id %d is outside the vocabulary of %d tokens", id, n)}
		}
	}
	return nil
}

type weights struct {
	f   *gguf.File
	err error
}

func tensorErr(f *gguf.File, name, msg string) error {
	return &gguf.FormatError{Path: f.Path, Field: fmt.Sprintf("tensor %q", name), Msg: msg}
}

func (w *weights) get(name string, cols, rows int, vector bool) Weight {
	if w.err != nil {
		return Weight{}
	}
	t, ok := w.f.Tensor(name)
	if !ok {
		w.err = tensorErr(w.f, name, "missing")
		return Weight{}
	}
	want := []uint64{uint64(cols), uint64(rows)}
	if vector {
		want = want[:1]
	}
	if !sameDims(t.Dims, want) {
		w.err = tensorErr(w.f, name, fmt.Sprintf("shape %v, expected %v", t.Dims, want))
		return Weight{}
	}
	if !t.Type.Supported() {
		w.err = tensorErr(w.f, name, fmt.Sprintf("type %s is not supported", t.Type))
		return Weight{}
	}
	if vector && t.Type != ggml.F32 {
		w.err = tensorErr(w.f, name, fmt.Sprintf("vector must be F32, found %s", t.Type))
		return Weight{}
	}
	return Weight{Name: name, Type: t.Type, Cols: cols, Rows: rows, Data: w.f.TensorData(t)}
}

// sameDims treats trailing 1s as absent: [64 1] is the vector [64].
func sameDims(got, want []uint64) bool {
	for len(got) > len(want) && got[len(got)-1] == 1 {
		got = got[:len(got)-1]
	}
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func (w *weights) matrix(name string, cols, rows int) Weight { return w.get(name, cols, rows, false) }
func (w *weights) vector(name string, n int) Weight          { return w.get(name, n, 1, true) }
