package arch

import (
	"fmt"
	"math"
	"strings"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// Load resolves the file's architecture declaration against the file: it
// reads the hyper-parameters and per-layer settings and locates every
// weight, checking each tensor's presence, type and shape so that the
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
	outNorm := "output_norm.weight"
	if a.OutputNorm != "" {
		outNorm = a.OutputNorm
	}
	m.OutputNorm = w.vector(outNorm, cfg.Embd)
	_, hasOutput := f.Tensor("output.weight")
	switch {
	case a.Output == OutputTiedOnly && hasOutput:
		return nil, tensorErr(f, "output.weight", fmt.Sprintf("must not be present: %s always projects with token_embd.weight", a.Name))
	case a.Output == OutputRequired || hasOutput:
		m.Output = w.matrix("output.weight", cfg.Embd, cfg.Vocab)
	default:
		m.Output, m.Tied = m.TokenEmbd, true
	}
	_, fusedQKV := f.Tensor("blk.0.attn_qkv.weight")
	fusedQKV = fusedQKV && a.FusedQKV // (a DeltaNet layer's attn_qkv is its own; no hybrid declares FusedQKV)
	// Every layer has at least perLayer tensors: checking that before
	// allocating keeps a block_count of 10^6 in a tiny file from costing
	// 10^6 Layer structs (600 MB) on the way to "tensor missing". (Optional
	// biases are left to the per-tensor check, which names the one that is
	// missing.)
	perLayer := a.tensorsPerLayer(fusedQKV)
	if cfg.Layers > len(f.Tensors)/perLayer {
		msg := fmt.Sprintf("%d layers need at least %d tensors, the file has %d", cfg.Layers, cfg.Layers*perLayer, len(f.Tensors))
		// Point at the first layer that is not there (an off-by-one
		// block_count is the common case); the search is bounded by the
		// tensor count, not by the claim.
		for i := 0; i <= len(f.Tensors)/perLayer; i++ {
			name := fmt.Sprintf("blk.%d.attn_output.weight", i)
			if _, ok := f.Tensor(name); !ok {
				msg += fmt.Sprintf(" (there is no tensor %q)", name)
				break
			}
		}
		return nil, &gguf.FormatError{Path: f.Path, Field: fmt.Sprintf("key %q", a.Name+".block_count"), Msg: msg}
	}
	lcs := layerConfigs(f, a, &cfg)
	if lcs.err != nil {
		return nil, lcs.err
	}
	for i := range lcs.layers {
		if lcs.layers[i].Kind == KindShortConv {
			m.ShortConvLayers++
		}
	}
	m.Layers = make([]Layer, cfg.Layers)
	for i := range m.Layers {
		m.Layers[i].Config = lcs.layers[i]
		switch lcs.layers[i].Kind {
		case KindMamba2:
			w.mamba2Layer(&m.Layers[i], fmt.Sprintf("blk.%d.", i), a, &cfg)
			continue
		case KindFFN:
			w.ffnLayer(&m.Layers[i], fmt.Sprintf("blk.%d.", i), a, &cfg)
			continue
		}
		if lcs.layers[i].Kind == KindDeltaNet {
			w.deltaNetLayer(&m.Layers[i], fmt.Sprintf("blk.%d.", i), a, &cfg)
			continue
		}
		if lcs.layers[i].Kind == KindShortConv {
			w.shortConvLayer(&m.Layers[i], fmt.Sprintf("blk.%d.", i), &cfg)
			continue
		}
		if a.MLA {
			w.mlaLayer(&m.Layers[i], i, a, &cfg)
			continue
		}
		w.layer(&m.Layers[i], i, a, &cfg, fusedQKV)
	}
	if a.PerLayer != nil {
		a.PerLayer.tensors(&w, m)
	}
	if a.MTP {
		w.mtp(m, a)
	}
	if w.err != nil {
		return nil, w.err
	}
	// A bias the recipe does not add (attn_output, FFN, output) would be
	// silently dropped and every logit wrong; llama.cpp's loader likewise
	// refuses a tensor it does not use.
	for i := range f.Tensors {
		if name := f.Tensors[i].Name; strings.HasSuffix(name, ".bias") && !w.used[name] {
			return nil, tensorErr(f, name, fmt.Sprintf("is not supported: %s as vkchat runs it adds no such bias", a.Name))
		}
	}
	half := cfg.Rope.Dims / 2
	for _, rf := range []struct {
		name string
		dst  *[]float32
	}{{"rope_freqs.weight", &m.Rope.FreqFactors}, {"rope_factors_long.weight", &m.Rope.LongFactors}, {"rope_factors_short.weight", &m.Rope.ShortFactors}} {
		if _, ok := f.Tensor(rf.name); !ok {
			continue
		}
		v := w.vector(rf.name, half)
		if w.err != nil {
			return nil, w.err
		}
		*rf.dst = make([]float32, half)
		for i := range *rf.dst {
			x := math.Float32frombits(le32(v.Data[4*i:]))
			// A zero or NaN divisor would turn every angle of its pair
			// into Inf or NaN.
			if !(x > 0) || math.IsInf(float64(x), 0) {
				return nil, tensorErr(f, rf.name, fmt.Sprintf("element %d is %g; frequency factors must be positive", i, x))
			}
			(*rf.dst)[i] = x
		}
	}
	return m, nil
}

// tensorsPerLayer is the fewest tensors one layer of this architecture has.
func (a *Arch) tensorsPerLayer(fusedQKV bool) int {
	if a.ShortConv {
		return shortConvTensors
	}
	if a.Mamba2 {
		return 3 // nemotron's FFN layer: attn_norm, up, down
	}
	n := 4 + 3 // q, k, v, output; gate, up, down
	if fusedQKV {
		n -= 2
	}
	if a.FusedGateUp {
		n--
	}
	if a.Gating != GatingNone && !a.ExpertsBesideDense {
		n++ // the router beside the three expert banks
	}
	if a.Sinks {
		n++
	}
	if a.PerLayer != nil {
		n -= 3 // a KV-shared layer has no K, V or K norm (and V may be K)
	}
	if a.Block.PreNorm {
		n += 2
	}
	if a.Block.PostNorm {
		n += 2
	}
	if a.Block.QKNorm != QKNormNone {
		n += 2
	}
	return n
}

// layer locates one layer's weights as the recipe asks for them.
func (w *weights) layer(l *Layer, il int, a Arch, cfg *Config, fusedQKV bool) {
	p := fmt.Sprintf("blk.%d.", il)
	lc := &l.Config
	q, kv := cfg.Heads*lc.HeadDim, lc.KVWidth()
	e := cfg.Embd
	qRows := q
	if a.Block.AttnGate {
		qRows = 2 * q // [q_h | gate_h] per head
	}
	// a KV-shared layer computes only Q: its K and V weights, when the
	// file has them, are not read (nor does llama.cpp need them)
	shared := lc.KVLayer != il
	if a.Block.PreNorm {
		l.AttnNorm = w.vector(p+"attn_norm.weight", e)
	}
	if fusedQKV {
		qkv := w.matrix(p+"attn_qkv.weight", e, q+2*kv)
		l.Wq, l.Wk, l.Wv = w.rows(qkv, 0, q, "Q"), w.rows(qkv, q, kv, "K"), w.rows(qkv, q+kv, kv, "V")
	} else {
		l.Wq = w.matrix(p+"attn_q.weight", e, qRows)
		if !shared {
			l.Wk = w.matrix(p+"attn_k.weight", e, kv)
			if _, ok := w.f.Tensor(p + "attn_v.weight"); !ok && a.PerLayer != nil && a.PerLayer.VFromK {
				l.Wv = l.Wk // V is the K projection before K's norm
			} else {
				l.Wv = w.matrix(p+"attn_v.weight", e, kv)
			}
		}
	}
	l.Wo = w.matrix(p+"attn_output.weight", q, e)
	if _, ok := w.f.Tensor(p + "attn_output.bias"); a.OutBias == Required || (a.OutBias == Optional && ok) {
		bo := w.vector(p+"attn_output.bias", e)
		l.Bo = &bo
	}
	if a.Sinks {
		s := w.vector(p+"attn_sinks.weight", cfg.Heads)
		l.Sinks = &s
	}
	biases := a.QKVBias == Required
	if a.QKVBias == Optional {
		_, bq := w.f.Tensor(p + "attn_q.bias")
		_, bqkv := w.f.Tensor(p + "attn_qkv.bias")
		biases = bq || bqkv
	}
	if biases {
		if _, ok := w.f.Tensor(p + "attn_qkv.bias"); ok && fusedQKV {
			b := w.vector(p+"attn_qkv.bias", q+2*kv)
			bq, bk, bv := w.elems(b, 0, q, "Q"), w.elems(b, q, kv, "K"), w.elems(b, q+kv, kv, "V")
			l.Bq, l.Bk, l.Bv = &bq, &bk, &bv
		} else {
			bq, bk, bv := w.vector(p+"attn_q.bias", q), w.vector(p+"attn_k.bias", kv), w.vector(p+"attn_v.bias", kv)
			l.Bq, l.Bk, l.Bv = &bq, &bk, &bv
		}
	}
	switch a.Block.QKNorm {
	case QKNormHead:
		qn := w.vector(p+"attn_q_norm.weight", lc.HeadDim)
		l.QNorm = &qn
		if !shared {
			kn := w.vector(p+"attn_k_norm.weight", lc.HeadDim)
			l.KNorm = &kn
		}
	case QKNormFull:
		qn, kn := w.vector(p+"attn_q_norm.weight", q), w.vector(p+"attn_k_norm.weight", kv)
		l.QNorm, l.KNorm = &qn, &kn
	}
	if a.Block.PostNorm {
		pa := w.vector(p+"post_attention_norm.weight", e)
		l.PostAttnNorm = &pa
	}
	if a.SingleBranch {
		return // the layer is its attention alone
	}
	w.ffn(l, p, a, cfg)
}

// ffn locates a layer's FFN: its norms and the dense or routed weights.
func (w *weights) ffn(l *Layer, p string, a Arch, cfg *Config) {
	e, ff := cfg.Embd, l.Config.FF
	if a.Block.PreNorm {
		name := "ffn_norm"
		if a.FFNNorm != "" {
			name = a.FFNNorm
		}
		l.FFNNorm = w.vector(p+name+".weight", e)
	}
	switch {
	case a.ExpertsBesideDense:
		w.expertsBesideDense(l, p, cfg, ff)
	case cfg.MoE.Experts > 0 && !l.Config.DenseFFN:
		l.Experts = w.experts(p, cfg)
		if a.SharedExpert && l.Experts != nil {
			l.Experts.Shared = w.sharedExpert(p, a, cfg)
		}
	case a.FusedGateUp:
		gu := w.matrix(p+"ffn_up.weight", e, 2*ff)
		l.Gate, l.Up = w.rows(gu, 0, ff, "gate"), w.rows(gu, ff, ff, "up")
		l.Down = w.matrix(p+"ffn_down.weight", ff, e)
	default:
		w.denseFFN(l, p, a, cfg, ff)
	}
	if a.Block.PostNorm {
		pf := w.vector(p+"post_ffw_norm.weight", e)
		l.PostFFNNorm = &pf
	}
}

// rows is rows [from, from+n) of a fused matrix: rows are contiguous in
// every type, so this is a slice of the mapped data.
func (w *weights) rows(m Weight, from, n int, part string) Weight {
	if w.err != nil {
		return Weight{}
	}
	rb, _ := m.Type.RowBytes(uint64(m.Cols))
	return Weight{Name: m.Name + "[" + part + "]", Type: m.Type, Cols: m.Cols, Rows: n,
		Data: m.Data[uint64(from)*rb : uint64(from+n)*rb]}
}

// elems is elements [from, from+n) of an F32 vector.
func (w *weights) elems(v Weight, from, n int, part string) Weight {
	if w.err != nil {
		return Weight{}
	}
	return Weight{Name: v.Name + "[" + part + "]", Type: v.Type, Cols: n, Rows: 1, Data: v.Data[4*from : 4*(from+n)]}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func loadConfig(f *gguf.File, a Arch) (Config, error) {
	l := &loader{f: f, arch: a.Name}
	c := Config{Arch: a.Name, Block: a.Block}
	c.Embd = l.uint("embedding_length", 0, true)
	perLayer := a.PerLayer != nil || a.Mamba2 // per-layer arrays
	c.FF = l.uintMax("feed_forward_length", 0, true, perLayer)
	c.Layers = l.uint("block_count", 0, true)
	c.Heads = l.uint("attention.head_count", 0, true)
	if a.ShortConv {
		c.KVHeads, c.ShortConvL = hybridKV(l, c.Layers)
	} else {
		c.KVHeads = l.uintMax("attention.head_count_kv", c.Heads, false, perLayer)
	}
	c.TrainCtx = l.uint("context_length", 2048, false)
	c.NormEps = l.float("attention.layer_norm_rms_epsilon", 1e-5)
	c.Rope.Base = l.float("rope.freq_base", 10000)
	c.Rope.NeoX = a.NeoX
	c.Rope.Scale = 1
	c.Rope.AttnFactor = 1
	if l.err != nil {
		return c, l.err
	}
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: f.Path, Field: fmt.Sprintf("key %q", a.Name+"."+key), Msg: msg}
	}
	// head_dim is embd/heads unless the architecture lets key_length set it
	// apart (real Qwen3 and Gemma 3 do).
	keyLength := (a.KeyLength && f.Has(l.key("attention.key_length"))) || a.MLA
	switch {
	case c.Embd == 0:
		return c, bad("embedding_length", "must be positive")
	case c.Layers == 0:
		return c, bad("block_count", "must be positive")
	case c.Heads == 0 || (!keyLength && c.Embd%c.Heads != 0):
		return c, bad("attention.head_count", fmt.Sprintf("%d does not divide embedding_length %d", c.Heads, c.Embd))
	case c.KVHeads == 0 && a.Mamba2:
		// a Mamba2 hybrid reads 0 as "this layer is Mamba2", so 0
		// everywhere is a file without attention, not a bad divisor
		return c, bad("attention.head_count_kv", "0 for every layer: a model without attention layers is not supported")
	case c.KVHeads == 0 || c.Heads%c.KVHeads != 0:
		return c, bad("attention.head_count_kv", fmt.Sprintf("%d does not divide head_count %d", c.KVHeads, c.Heads))
	case c.FF == 0:
		return c, bad("feed_forward_length", "must be positive")
	case !(c.NormEps > 0) || c.NormEps > 1:
		return c, bad("attention.layer_norm_rms_epsilon", fmt.Sprintf("%g is not a small positive number", c.NormEps))
	case !(c.Rope.Base > 0) || math.IsInf(float64(c.Rope.Base), 0):
		return c, bad("rope.freq_base", fmt.Sprintf("%g must be positive", c.Rope.Base))
	}
	if a.MLA {
		if err := loadMLA(l, &c); err != nil {
			return c, err
		}
	} else if keyLength {
		c.HeadDim = l.uint("attention.key_length", 0, true)
		if l.err != nil {
			return c, l.err
		}
		if c.HeadDim == 0 || c.HeadDim%2 != 0 {
			return c, bad("attention.key_length", fmt.Sprintf("%d must be even and positive", c.HeadDim))
		}
		if c.Heads*c.HeadDim > 1<<20 {
			return c, bad("attention.key_length", fmt.Sprintf("head_count %d × key_length %d is implausibly large", c.Heads, c.HeadDim))
		}
	} else {
		c.HeadDim = c.Embd / c.Heads
		if kl := l.uint("attention.key_length", c.HeadDim, false); kl != c.HeadDim {
			return c, bad("attention.key_length", fmt.Sprintf("%d differs from embedding_length/head_count %d, which is not supported for %s", kl, c.HeadDim, a.Name))
		}
	}
	// The cache and attention keep one head size for keys and values
	// (MLA's cached row is checked by loadMLA).
	if vl := l.uint("attention.value_length", c.HeadDim, false); vl != c.HeadDim && !a.MLA {
		return c, bad("attention.value_length", fmt.Sprintf("%d differs from the key length %d, which is not supported", vl, c.HeadDim))
	}
	c.Rope.Dims = l.uint("rope.dimension_count", c.HeadDim, false)
	if c.Rope.Dims == 0 || c.Rope.Dims > c.HeadDim || c.Rope.Dims%2 != 0 {
		return c, bad("rope.dimension_count", fmt.Sprintf("%d must be even and at most the head size %d", c.Rope.Dims, c.HeadDim))
	}
	st, scaled, _ := f.String(a.Name + ".rope.scaling.type")
	if scaled && (st == "linear" || st == "yarn") {
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
	c.Rope.AttnFactor = l.float("rope.scaling.attn_factor", 1)
	c.Rope.OrigCtx = l.uint("rope.scaling.original_context_length", 0, false)
	if l.err != nil {
		return c, l.err
	}
	if scaled && st == "yarn" {
		if c.Rope.OrigCtx == 0 {
			return c, bad("rope.scaling.original_context_length", "missing or 0: YaRN blends by the original context")
		}
		fast, slow, logMul := float32(yarnBetaFast), float32(yarnBetaSlow), float32(0)
		if a.YaRNKeys {
			fast = l.float("rope.scaling.yarn_beta_fast", fast)
			slow = l.float("rope.scaling.yarn_beta_slow", slow)
			logMul = l.float("rope.scaling.yarn_log_multiplier", 0)
			if l.err != nil {
				return c, l.err
			}
			for _, b := range []struct {
				key string
				v   float32
			}{{"rope.scaling.yarn_beta_fast", fast}, {"rope.scaling.yarn_beta_slow", slow}} {
				if !(b.v > 0) || b.v > 1e6 {
					return c, bad(b.key, fmt.Sprintf("%g must be a positive number", b.v))
				}
			}
			if !(logMul >= 0) || logMul > 100 {
				return c, bad("rope.scaling.yarn_log_multiplier", fmt.Sprintf("%g must be a small non-negative number", logMul))
			}
		}
		c.Rope.YaRN = yarn(c.Rope, fast, slow)
		if logMul != 0 {
			c.Rope.AttnFactor = yarnLogMulFactor(1/c.Rope.Scale, logMul) * c.Rope.AttnFactor
		}
	}
	if !(c.Rope.AttnFactor > 0) || c.Rope.AttnFactor > 100 {
		return c, bad("rope.scaling.attn_factor", fmt.Sprintf("%g must be a positive number", c.Rope.AttnFactor))
	}
	if a.TemperatureKey != "" {
		if err := loadTemperature(l, a, &c); err != nil {
			return c, err
		}
	}
	if err := loadMoE(l, a, &c); err != nil {
		return c, err
	}
	if a.RoutingKeys && c.MoE.Experts > 0 {
		if err := loadRouting(l, &c); err != nil {
			return c, err
		}
	}
	if a.MLA {
		c.LeadDense = l.uint("leading_dense_block_count", 0, false)
		if l.err != nil {
			return c, l.err
		}
		if c.LeadDense > c.Layers {
			return c, bad("leading_dense_block_count", fmt.Sprintf("%d is more than the %d layers", c.LeadDense, c.Layers))
		}
		if err := mlaScale(l, &c); err != nil {
			return c, err
		}
	}
	if a.DeltaNet {
		if err := loadDeltaNet(l, &c); err != nil {
			return c, err
		}
	}
	if a.Mamba2 {
		if err := loadMamba2(l, &c); err != nil {
			return c, err
		}
	}
	if err := resolveScales(l, a, &c); err != nil {
		return c, err
	}
	if a.MLA {
		c.AttnScale = c.MLA.Scale
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

// loadTemperature reads the attention temperature tuning: β from the
// declared key, the step L from the original context YaRN names, else the
// training context (llama.cpp's n_ctx_orig_yarn).
func loadTemperature(l *loader, a Arch, c *Config) error {
	beta := l.float(a.TemperatureKey, 0)
	if l.err != nil {
		return l.err
	}
	if beta == 0 {
		return nil
	}
	if !(beta > 0) || beta > 100 {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(a.TemperatureKey)), Msg: fmt.Sprintf("%g must be a small positive number", beta)}
	}
	n := c.Rope.OrigCtx
	if n == 0 {
		n = c.TrainCtx
	}
	if n <= 0 {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key("context_length")),
			Msg: "must be positive: the attention temperature steps by the original context"}
	}
	c.QTemperature = Temperature{Beta: beta, Length: n}
	return nil
}

// resolveScales turns the declaration's multipliers and caps into numbers,
// rounded as llama.cpp computes them (in float32).
func resolveScales(l *loader, a Arch, c *Config) error {
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}
	}
	// optional reads a multiplier: absent or 0 means off (1); anything
	// that is not a finite positive number would poison every activation.
	optional := func(key string) (float32, error) {
		if key == "" {
			return 0, nil
		}
		v := l.float(key, 0)
		if l.err != nil {
			return 0, l.err
		}
		if v < 0 || math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0, bad(key, fmt.Sprintf("%g must be a positive number (or 0 for none)", v))
		}
		return v, nil
	}
	sqrtf := func(x float32) float32 { return float32(math.Sqrt(float64(x))) }
	c.EmbedScale, c.ResidualScale, c.LogitScale = 1, 1, 1
	if a.EmbedScaleSqrt {
		c.EmbedScale = sqrtf(float32(c.Embd))
	}
	v, err := optional(a.EmbedScaleKey)
	if err != nil {
		return err
	}
	if v != 0 {
		c.EmbedScale = v
	}
	if v, err = optional(a.ResidualScaleKey); err != nil {
		return err
	} else if v != 0 {
		c.ResidualScale = v
	}
	c.AttnScale = 1 / sqrtf(float32(c.HeadDim))
	if a.AttnScaleEmbdLayers != 0 && c.Layers == a.AttnScaleEmbdLayers {
		c.AttnScale = 1 / sqrtf(float32(c.Embd/c.Heads))
	}
	if a.AttnScaleFixed != 0 {
		c.AttnScale = a.AttnScaleFixed
	}
	if v, err = optional(a.AttnScaleKey); err != nil {
		return err
	} else if v != 0 {
		c.AttnScale = v
	}
	c.ScaleQ = a.ScaleQ
	if a.LogitScaleKey != "" {
		if a.LogitScaleNeeded && !l.f.Has(l.key(a.LogitScaleKey)) {
			return bad(a.LogitScaleKey, "missing")
		}
		if v, err = optional(a.LogitScaleKey); err != nil {
			return err
		} else if v != 0 {
			c.LogitScale = 1 / v
		} else if a.LogitScaleNeeded {
			return bad(a.LogitScaleKey, "must be positive")
		}
	}
	for _, cp := range []struct {
		decl Capped
		dst  *float32
	}{{a.AttnSoftcap, &c.AttnSoftcap}, {a.FinalSoftcap, &c.FinalSoftcap}} {
		if cp.decl.Key == "" {
			continue
		}
		v := l.float(cp.decl.Key, cp.decl.Default)
		if l.err != nil {
			return l.err
		}
		if v < 0 || math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return bad(cp.decl.Key, fmt.Sprintf("%g must be a positive number (or 0 for none)", v))
		}
		*cp.dst = v
	}
	return nil
}

type layerSet struct {
	layers []LayerConfig
	err    error
}

// layerConfigs resolves what differs between layers: NoPE layers, the
// sliding window and the local layers' RoPE base and scale.
func layerConfigs(f *gguf.File, a Arch, c *Config) layerSet {
	l := &loader{f: f, arch: a.Name}
	bad := func(key, msg string) layerSet {
		return layerSet{err: &gguf.FormatError{Path: f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}}
	}
	rope := true
	if a.RopeFinetunedKey != "" {
		ft, ok, err := f.Bool(l.key(a.RopeFinetunedKey))
		if err != nil {
			return layerSet{err: err}
		}
		rope = !ok || ft
	}
	if a.NoRope {
		rope = false
	}
	window, period := 0, a.SWA.Period
	localBase, localScale := c.Rope.Base, c.Rope.Scale
	if s := a.SWA; s.Key != "" {
		window = l.uint(s.Key, s.DefaultWindow, false)
		if s.Disabled {
			window = 0
		}
		// llama.cpp reads the pattern as a scalar and ignores an array
		// (OLMo 3's converter writes a bool array).
		if v, ok := f.Get(l.key(s.PeriodKey)); ok && s.PeriodKey != "" {
			if _, isArray := v.(gguf.Array); !isArray {
				period = l.uint(s.PeriodKey, period, false)
			}
		}
		if s.LocalBaseKey != "" {
			def := c.Rope.Base
			if s.LocalBaseDefault != 0 {
				def = s.LocalBaseDefault
			}
			localBase = l.float(s.LocalBaseKey, def)
			if l.err == nil && (!(localBase > 0) || math.IsInf(float64(localBase), 0)) {
				return bad(s.LocalBaseKey, fmt.Sprintf("%g must be positive", localBase))
			}
		}
		if s.LocalUnscaled {
			localScale = 1
		}
	}
	if l.err != nil {
		return layerSet{err: l.err}
	}
	out := make([]LayerConfig, c.Layers)
	for il := range out {
		lc := LayerConfig{Rope: rope, RopeBase: c.Rope.Base, RopeScale: c.Rope.Scale,
			HeadDim: c.HeadDim, KVHeads: c.KVHeads, FF: c.FF, RopeDims: c.Rope.Dims, KVLayer: il}
		if a.NoRopeEvery > 0 && (il+1)%a.NoRopeEvery == 0 {
			lc.Rope = false
		}
		// llama.cpp: period 0 makes every layer local; otherwise the last
		// layer of each period is global.
		if window > 0 && (period == 0 || il%period < period-1) {
			lc.Window, lc.RopeBase, lc.RopeScale = window, localBase, localScale
		}
		if a.DeltaNet {
			lc.Kind = deltaNetKind(c, il)
		}
		lc.DenseFFN = il < c.LeadDense
		out[il] = lc
	}
	if a.Mamba2 {
		if err := mamba2Sizes(l, a, c, out); err != nil {
			return layerSet{err: err}
		}
	}
	if a.ShortConv || a.PerLayer != nil {
		if err := perLayerSizes(l, a, c, out); err != nil {
			return layerSet{err: err}
		}
	}
	if a.PerLayer != nil {
		if err := a.PerLayer.resolve(l, a, c, out, localBase, localScale); err != nil {
			return layerSet{err: err}
		}
	}
	return layerSet{layers: out}
}

// perLayerSizes reads attention.head_count_kv and feed_forward_length,
// each one number for every layer or an array with one per layer (lfm2,
// gemma4), into the layers' configs (Config holds the largest, the size
// buffers are made for). A 0 KV-head entry is a short-convolution layer
// where the architecture has them (lfm2); an attention layer's KV heads
// must divide head_count.
func perLayerSizes(l *loader, a Arch, c *Config, out []LayerConfig) error {
	kv := l.uints("attention.head_count_kv", len(out), c.KVHeads)
	ff := l.uints("feed_forward_length", len(out), c.FF)
	if l.err != nil {
		return l.err
	}
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}
	}
	for il := range out {
		lc := &out[il]
		switch {
		case kv[il] == 0 && a.ShortConv:
			lc.Kind = KindShortConv
		case kv[il] == 0 || c.Heads%kv[il] != 0:
			return bad("attention.head_count_kv", fmt.Sprintf("layer %d: %d does not divide head_count %d", il, kv[il], c.Heads))
		}
		if ff[il] == 0 {
			return bad("feed_forward_length", fmt.Sprintf("layer %d: must be positive", il))
		}
		lc.KVHeads, lc.FF = kv[il], ff[il]
	}
	return nil
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
	f    *gguf.File
	err  error
	used map[string]bool
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
	w.use(name)
	return Weight{Name: name, Type: t.Type, Cols: cols, Rows: rows, Data: w.f.TensorData(t)}
}

// use records a tensor the recipe reads (see Load's check for unread biases).
func (w *weights) use(name string) {
	if w.used == nil {
		w.used = map[string]bool{}
	}
	w.used[name] = true
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
