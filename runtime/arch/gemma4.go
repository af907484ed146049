package arch

import (
	"fmt"

	"vkchat/runtime/gguf"
)

// Gemma 4 (llama.cpp models/gemma4.cpp): Gemma 3's block with per-layer
// geometry. A bool array says which layers slide; sliding layers have
// their own head size, RoPE dims and base, full layers rotate through the
// rope_freqs table ("proportional" RoPE: factors of 1e30 leave a pair
// unrotated). The attention scale is 1 (the Q/K norms scale), V is
// RMS-normalized without a weight, layer_output_scale multiplies the
// stream after each layer, and the last shared_kv_layers layers compute
// only Q and attend to the cache of the last earlier layer of their kind.
// E2B/E4B add per-layer embeddings (PerLayerEmbd). Norm weights multiply
// as stored (no +1 at conversion). The 26B-A4B runs GELU-gated experts
// beside each layer's dense FFN (ExpertsBesideDense), routed by softmax
// over all experts, top-k, renormalized.
func init() {
	register(Arch{
		Name: "gemma4", NeoX: true, KeyLength: true,
		Block:  Block{PreNorm: true, PostNorm: true, QKNorm: QKNormHead, Act: ActGELUTanh, VNorm: true},
		Gating: GatingSoftmaxTopKNorm, ExpertsBesideDense: true,
		EmbedScaleSqrt: true, AttnScaleFixed: 1,
		FinalSoftcap: Capped{Key: "final_logit_softcapping", Default: 30},
		SWA: SlidingWindow{
			Key:          "attention.sliding_window",
			LocalBaseKey: "rope.freq_base_swa", LocalBaseDefault: 10000, LocalUnscaled: true,
		},
		PerLayer: &PerLayerDecl{
			PatternKey:     "attention.sliding_window_pattern",
			KeyLengthSWA:   "attention.key_length_swa",
			ValueLengthSWA: "attention.value_length_swa",
			RopeDimsSWA:    "rope.dimension_count_swa",
			SharedKVKey:    "attention.shared_kv_layers",
			PLEWidthKey:    "embedding_length_per_layer_input",
			VFromK:         true,
		},
	})
}

// PerLayerDecl declares the keys of an architecture whose layers differ in
// geometry (gemma4). head_count_kv and feed_forward_length may then be
// per-layer arrays (Config holds their largest value).
type PerLayerDecl struct {
	// PatternKey: a bool per layer, true = sliding window (or one bool
	// for all layers).
	PatternKey string
	// Sliding layers' head size (keys and values, which must agree) and
	// rotated dims (default: the head size).
	KeyLengthSWA, ValueLengthSWA, RopeDimsSWA string
	// SharedKVKey: the last n layers read an earlier layer's cache.
	SharedKVKey string
	// PLEWidthKey: the per-layer embedding width P; absent or 0 = none.
	PLEWidthKey string
	// VFromK: a layer without attn_v uses its K projection as V.
	VFromK bool
}

// PerLayerEmbd is Gemma 4's per-layer embedding input (E2B/E4B): for each
// token a row of P values per layer gathered from Token (× √P), plus the
// projection Proj·x_embd/√embd normalized by Norm per layer, the two
// summed and × 1/√2. Each layer then adds
// rms(PLE.Proj·(gelu(PLE.Gate·x) ⊙ input))·PLE.Norm to its stream.
type PerLayerEmbd struct {
	Width int    // P
	Token Weight // per_layer_token_embd [P·layers x vocab]; large, read per token from the mapped file
	Proj  Weight // per_layer_model_proj [embd x P·layers]
	Norm  Weight // per_layer_proj_norm [P]
}

// LayerPLE is one layer's use of the per-layer embeddings.
type LayerPLE struct {
	Gate Weight // inp_gate [embd x P]
	Proj Weight // proj [P x embd]
	Norm Weight // post_norm [embd]
}

// resolve sets what differs between layers beyond the per-layer KV heads
// and FF widths (perLayerSizes): which slide (with their window, head
// size, RoPE dims and base, and no frequency factors), and the layers
// sharing a cache.
func (d *PerLayerDecl) resolve(l *loader, a Arch, c *Config, out []LayerConfig, localBase, localScale float32) error {
	f := l.f
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}
	}
	n := len(out)
	sliding := make([]bool, n)
	if v, ok := f.Get(l.key(d.PatternKey)); ok {
		switch p := v.(type) {
		case bool:
			for i := range sliding {
				sliding[i] = p
			}
		case gguf.Array:
			b, isBool := p.Values.([]bool)
			if !isBool || len(b) != n {
				return bad(d.PatternKey, fmt.Sprintf("must be %d bools (one per layer), found %d values of %s", n, p.Len(), p.Elem))
			}
			copy(sliding, b)
		default:
			return bad(d.PatternKey, fmt.Sprintf("must be a bool or an array of bools, found %T", v))
		}
	}
	window := l.uint(a.SWA.Key, 0, false)
	hdSWA := l.uint(d.KeyLengthSWA, c.HeadDim, false)
	vlSWA := l.uint(d.ValueLengthSWA, hdSWA, false)
	ropeSWA := l.uint(d.RopeDimsSWA, hdSWA, false)
	shared := l.uint(d.SharedKVKey, 0, false)
	if l.err != nil {
		return l.err
	}
	anySliding := false
	for _, s := range sliding {
		anySliding = anySliding || s
	}
	switch {
	case anySliding && window == 0:
		return bad(a.SWA.Key, "missing or 0, but "+l.key(d.PatternKey)+" marks sliding layers")
	case hdSWA == 0 || hdSWA%2 != 0 || c.Heads*hdSWA > 1<<20:
		return bad(d.KeyLengthSWA, fmt.Sprintf("%d must be even, positive and at most 2^20 / head_count", hdSWA))
	case vlSWA != hdSWA:
		return bad(d.ValueLengthSWA, fmt.Sprintf("%d differs from the sliding key length %d, which is not supported", vlSWA, hdSWA))
	case ropeSWA == 0 || ropeSWA > hdSWA || ropeSWA%2 != 0:
		return bad(d.RopeDimsSWA, fmt.Sprintf("%d must be even and at most the sliding head size %d", ropeSWA, hdSWA))
	case shared >= n:
		return bad(d.SharedKVKey, fmt.Sprintf("%d must be fewer than the %d layers", shared, n))
	}
	for il := range out {
		lc := &out[il]
		lc.Window, lc.RopeBase, lc.RopeScale, lc.NoRopeFactors = 0, c.Rope.Base, c.Rope.Scale, false
		lc.HeadDim, lc.RopeDims = c.HeadDim, c.Rope.Dims
		if sliding[il] {
			lc.Window, lc.RopeBase, lc.RopeScale, lc.NoRopeFactors = window, localBase, localScale, true
			lc.HeadDim, lc.RopeDims = hdSWA, ropeSWA
		}
	}
	// llama.cpp: a shared layer reads layer n-shared-1 when full and
	// n-shared-2 when sliding, which with Gemma 4's patterns is the last
	// earlier layer of its kind; that rule is the one stated here.
	first := n - shared
	for il := first; il < n; il++ {
		src := -1
		for j := first - 1; j >= 0; j-- {
			if sliding[j] == sliding[il] {
				src = j
				break
			}
		}
		if src < 0 {
			return bad(d.SharedKVKey, fmt.Sprintf("layer %d shares a cache, but no earlier layer of its kind owns one", il))
		}
		if out[src].KVHeads != out[il].KVHeads {
			return bad("attention.head_count_kv", fmt.Sprintf("layer %d has %d KV heads but reads the cache of layer %d, which has %d", il, out[il].KVHeads, src, out[src].KVHeads))
		}
		out[il].KVLayer = src
	}
	return nil
}

// tensors reads what the block recipe does not name: each layer's output
// scale and per-layer embedding weights, and the model's PLE tables.
func (d *PerLayerDecl) tensors(w *weights, m *Model) {
	l := &loader{f: w.f, arch: m.Arch}
	p := l.uint(d.PLEWidthKey, 0, false)
	if l.err != nil && w.err == nil {
		w.err = l.err
	}
	e, n := m.Embd, len(m.Layers)
	for il := range m.Layers {
		L, pre := &m.Layers[il], fmt.Sprintf("blk.%d.", il)
		if _, ok := w.f.Tensor(pre + "layer_output_scale.weight"); ok {
			s := w.vector(pre+"layer_output_scale.weight", 1)
			L.OutScale = &s
		}
		if p > 0 {
			L.PLE = &LayerPLE{
				Gate: w.matrix(pre+"inp_gate.weight", e, p),
				Proj: w.matrix(pre+"proj.weight", p, e),
				Norm: w.vector(pre+"post_norm.weight", e),
			}
		}
	}
	if p > 0 {
		m.PLE = &PerLayerEmbd{
			Width: p,
			Token: w.matrix("per_layer_token_embd.weight", p*n, m.Vocab),
			Proj:  w.matrix("per_layer_model_proj.weight", e, p*n),
			Norm:  w.vector("per_layer_proj_norm.weight", p),
		}
	}
}

// expertsBesideDense locates a layer's dense FFN and, where the layer has
// a router, the experts that run beside it with their own norms and
// scales (llama.cpp decides per layer, by ffn_gate_inp.weight alone).
func (w *weights) expertsBesideDense(l *Layer, p string, cfg *Config, ff int) {
	e := cfg.Embd
	l.Gate = w.matrix(p+"ffn_gate.weight", e, ff)
	l.Up = w.matrix(p+"ffn_up.weight", e, ff)
	l.Down = w.matrix(p+"ffn_down.weight", ff, e)
	if _, ok := w.f.Tensor(p + "ffn_gate_inp.weight"); !ok || w.err != nil {
		return
	}
	if cfg.MoE.Experts == 0 {
		w.err = tensorErr(w.f, p+"ffn_gate_inp.weight", "is a router, but the file has no "+cfg.Arch+".expert_count to shape its experts by")
		return
	}
	x := w.experts(p, cfg)
	rs := w.vector(p+"ffn_gate_inp.scale", e)
	pre, post, dense := w.vector(p+"pre_ffw_norm_2.weight", e), w.vector(p+"post_ffw_norm_2.weight", e), w.vector(p+"post_ffw_norm_1.weight", e)
	x.RouterScale, x.PreNorm, x.PostNorm = &rs, &pre, &post
	// optional in llama.cpp too (its generic pass loads it when present):
	// without it every expert's output is × 1
	if _, ok := w.f.Tensor(p + "ffn_down_exps.scale"); ok {
		ds := w.vector(p+"ffn_down_exps.scale", cfg.MoE.Experts)
		x.DownScale = &ds
	}
	l.Experts, l.PostDenseNorm = x, &dense
}

// uintMax reads a size that may be a per-layer array when arrays is set,
// returning its largest element (the size buffers are made for).
func (l *loader) uintMax(k string, def int, required, arrays bool) int {
	if v, ok := l.f.Get(l.key(k)); ok && arrays && l.err == nil {
		if _, isArray := v.(gguf.Array); isArray {
			most := 0
			for _, x := range l.uints(k, -1, def) {
				most = max(most, x)
			}
			return most
		}
	}
	return l.uint(k, def, required)
}

// uints reads a key that is either one number for every layer or an array
// of n (n < 0: any length). It is the one parser of per-layer arrays
// (head_count_kv and feed_forward_length of lfm2 and gemma4).
func (l *loader) uints(k string, n, def int) []int {
	if l.err != nil {
		return nil
	}
	v, ok := l.f.Get(l.key(k))
	if _, isArray := v.(gguf.Array); !ok || !isArray {
		x := l.uint(k, def, false)
		out := make([]int, max(n, 1))
		for i := range out {
			out[i] = x
		}
		return out
	}
	a, _, err := l.f.Int32s(l.key(k))
	if err != nil {
		l.err = err
		return nil
	}
	if n >= 0 && len(a) != n {
		l.err = &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(k)), Msg: fmt.Sprintf("has %d entries for %d layers (block_count)", len(a), n)}
		return nil
	}
	out := make([]int, len(a))
	for i, x := range a {
		if x < 0 || x > 1<<24 {
			l.err = &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(k)), Msg: fmt.Sprintf("entry %d is %d, not a size between 0 and 2^24", i, x)}
			return nil
		}
		out[i] = int(x)
	}
	return out
}

// Widths is the largest per-layer size of each activation: layers may
// differ in head size, KV heads, FF width and rotated dims (gemma4), and
// backends size their buffers once for the widest.
type Widths struct {
	Q, KV, FF        int // heads × head dim, kv heads × head dim, FF
	HeadDim, KVHeads int
	RopeDims         int
}

// Widest is Widths over the model's layers (at least the model-wide
// figures, for a model assembled without the loader).
func (m *Model) Widest() Widths {
	w := Widths{Q: m.Heads * m.HeadDim, KV: m.KVHeads * m.HeadDim, FF: m.FF, HeadDim: m.HeadDim, KVHeads: m.KVHeads, RopeDims: m.Rope.Dims}
	for i := range m.Layers {
		lc := &m.Layers[i].Config
		w.Q = max(w.Q, m.Heads*lc.HeadDim)
		w.KV = max(w.KV, lc.KVWidth())
		w.FF = max(w.FF, lc.FF)
		w.HeadDim = max(w.HeadDim, lc.HeadDim)
		w.KVHeads = max(w.KVHeads, lc.KVHeads)
		w.RopeDims = max(w.RopeDims, lc.RopeDims)
	}
	return w
}
