package arch

import (
	"fmt"
	"math"

	"vkchat/runtime/gguf"
)

// DeepSeek-V2/V3 and GLM-4.7-Flash (llama.cpp src/models/deepseek2.cpp;
// ../shared/docs/architectures-2026b.md, "deepseek2 with MLA"): multi-head
// latent attention over a cache of one compressed row per token (the
// latent c and a shared RoPE key, run in the absorbed form as MQA), YaRN
// with its attention-scale correction, the first layers with a dense FFN
// and the rest routed (sigmoid or softmax gating, a bias used only to
// choose, group-limited selection, renormalised, scaled) beside an
// ungated shared expert.
func init() {
	register(Arch{
		Name: "deepseek2", MLA: true, Output: OutputOrTied,
		Block:         Block{PreNorm: true, Act: ActSiLU},
		Gating:        GatingSoftmax, // expert_gating_func says which
		RoutingKeys:   true,
		SharedExpert:  true,
		SharedUngated: true,
	})
}

// MLAConfig is the shape of multi-head latent attention: per head a query
// of Nope+Rope values ([nope | rope]), one cached row per token of KVLora
// latent values and Rope shared RoPE key values, a value head of V.
type MLAConfig struct {
	QLora  int // q_lora_rank; 0 = a direct attn_q
	KVLora int // kv_lora_rank r: the latent's width
	Nope   int // per-head query/key width without RoPE
	Rope   int // per-head RoPE width (rope.dimension_count)
	V      int // per-head value width after decompression
	// Scale is the score scale mscale²/√(Nope+Rope), mscale YaRN's
	// correction (1 without YaRN), as llama.cpp computes it in float32.
	Scale float32
}

// CacheRow is one position's cached row: the latent and the RoPE key.
func (m MLAConfig) CacheRow() int { return m.KVLora + m.Rope }

// MLA is one layer's latent-attention weights (beside Layer.AttnNorm
// and Layer.Wo [heads·V x embd]).
type MLA struct {
	// Q is attn_q_b [q_lora x heads·(nope+rope)] after QA and QANorm, or
	// the direct attn_q [embd x heads·(nope+rope)] where QA is nil.
	QA, QANorm *Weight
	Q          Weight
	KVA        Weight // attn_kv_a_mqa [embd x r+rope]: [latent | rope key]
	KVANorm    Weight // attn_kv_a_norm [r]
	// KB and VB are stored split per head: KB [nope x r·heads] (head h's
	// r rows absorb its q_nope into the latent), VB [r x V·heads] (head
	// h's V rows decompress its attention output).
	KB, VB Weight
}

// loadMLA reads the MLA keys (deepseek2.cpp's hparams) into c: the head
// size is the decompressed key_length_mla, there is one "KV head" (the
// cached row), and the attention scale carries YaRN's correction.
func loadMLA(l *loader, c *Config) error {
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}
	}
	m := MLAConfig{}
	m.QLora = l.uint("attention.q_lora_rank", 0, false)
	m.KVLora = l.uint("attention.kv_lora_rank", 0, true)
	kmla := l.uint("attention.key_length_mla", 0, true)
	m.V = l.uint("attention.value_length_mla", 0, true)
	kl := l.uint("attention.key_length", 0, false)
	vl := l.uint("attention.value_length", 0, false)
	m.Rope = l.uint("rope.dimension_count", 0, true)
	if l.err != nil {
		return l.err
	}
	switch {
	case m.KVLora == 0 || m.KVLora > 1<<16:
		return bad("attention.kv_lora_rank", fmt.Sprintf("%d must be positive and at most 65536", m.KVLora))
	case m.Rope == 0 || m.Rope%2 != 0 || m.Rope >= kmla:
		return bad("rope.dimension_count", fmt.Sprintf("%d must be even, positive and below key_length_mla %d", m.Rope, kmla))
	case kmla > 1<<12 || c.Heads*kmla > 1<<20:
		return bad("attention.key_length_mla", fmt.Sprintf("%d × %d heads is implausibly large", kmla, c.Heads))
	case m.V == 0 || m.V > 1<<12:
		return bad("attention.value_length_mla", fmt.Sprintf("%d must be positive and at most 4096", m.V))
	case kl != 0 && kl != m.KVLora+m.Rope:
		return bad("attention.key_length", fmt.Sprintf("%d, but the cached row is kv_lora_rank %d + rope %d", kl, m.KVLora, m.Rope))
	case vl != 0 && vl != m.KVLora:
		return bad("attention.value_length", fmt.Sprintf("%d, but the cached value is the latent of kv_lora_rank %d", vl, m.KVLora))
	case c.KVHeads != 1:
		return bad("attention.head_count_kv", fmt.Sprintf("%d: absorbed MLA attends to one cached row per token (1)", c.KVHeads))
	}
	// Mistral Large 3's conversion scales the absorbed query per position
	// (llama.cpp's inp_attn_scale); run without it, every score would be
	// off past the first temperature_length positions
	if t := l.float("attention.temperature_scale", 0); t != 0 && l.err == nil {
		return bad("attention.temperature_scale", fmt.Sprintf("%g: the attention temperature tuning of a deepseek2 file (Mistral Large 3) is not supported yet", t))
	}
	m.Nope = kmla - m.Rope
	c.HeadDim = kmla
	c.Rope.Dims = m.Rope
	c.MLA = m
	return nil
}

// mlaScale resolves the score scale once the RoPE is: llama.cpp's context
// divides the rotation's magnitude by YaRN's 1+0.1·ln(factor) (so the
// rotated part carries none), and the graph puts the whole correction,
// with the file's yarn_log_multiplier, into the score scale.
func mlaScale(l *loader, c *Config) error {
	// the converter stores 0.1·mscale_all_dim; llama.cpp's loader divides
	logMul := l.float("rope.scaling.yarn_log_multiplier", 0) / 0.1
	if l.err != nil {
		return l.err
	}
	if math.IsNaN(float64(logMul)) || math.IsInf(float64(logMul), 0) || logMul < 0 || logMul > 100 {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key("rope.scaling.yarn_log_multiplier")), Msg: "must be a small non-negative number"}
	}
	attnFactor := c.Rope.AttnFactor
	lnInv := logf(1 / c.Rope.Scale)
	if c.Rope.YaRN != nil {
		attnFactor = c.Rope.AttnFactor / (1 + 0.1*lnInv)
		c.Rope.AttnFactor = attnFactor
	}
	org := attnFactor * (1 + 0.1*lnInv)
	mscale := org * (1 + 0.1*logMul*lnInv)
	c.MLA.Scale = mscale * mscale / float32(math.Sqrt(float64(c.HeadDim)))
	return nil
}

// mlaLayer locates one latent-attention layer's weights and its FFN.
func (w *weights) mlaLayer(l *Layer, il int, a Arch, cfg *Config) {
	p := fmt.Sprintf("blk.%d.", il)
	m, e, h := cfg.MLA, cfg.Embd, cfg.Heads
	qw := h * (m.Nope + m.Rope)
	if _, ok := w.f.Tensor(p + "attn_kv_b.weight"); ok && w.err == nil {
		w.err = tensorErr(w.f, p+"attn_kv_b.weight", "is the fused K/V decompression of an old conversion, which runs MLA without absorption; vkchat reads attn_k_b and attn_v_b (convert the model again with a current llama.cpp)")
		return
	}
	x := &MLA{}
	l.AttnNorm = w.vector(p+"attn_norm.weight", e)
	if m.QLora > 0 {
		qa, qn := w.matrix(p+"attn_q_a.weight", e, m.QLora), w.vector(p+"attn_q_a_norm.weight", m.QLora)
		x.QA, x.QANorm = &qa, &qn
		x.Q = w.matrix(p+"attn_q_b.weight", m.QLora, qw)
	} else {
		x.Q = w.matrix(p+"attn_q.weight", e, qw)
	}
	x.KVA = w.matrix(p+"attn_kv_a_mqa.weight", e, m.KVLora+m.Rope)
	x.KVANorm = w.vector(p+"attn_kv_a_norm.weight", m.KVLora)
	x.KB = w.bank(p+"attn_k_b.weight", m.Nope, m.KVLora, h)
	x.VB = w.bank(p+"attn_v_b.weight", m.KVLora, m.V, h)
	l.Wo = w.matrix(p+"attn_output.weight", h*m.V, e)
	l.MLA = x
	w.ffn(l, p, a, cfg)
}

// loadRouting reads the routing rule's keys beside expert_count
// (llama.cpp's generic expert_* hparams): the gating function, whether
// the chosen weights are renormalised and by what they are scaled, the
// expert groups, and the shared experts' count (their FF is that many
// experts' FF).
func loadRouting(l *loader, c *Config) error {
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}
	}
	m := &c.MoE
	// absent: softmax, for DeepSeek V2 and V2.5 files, but sigmoid for
	// the GLM-4.7 Lite shape (47 or 48 layers, 154880 tokens), as
	// llama.cpp's loader decides; and the declared gating where it is
	// sigmoid (nemotron_h_moe's files have no key)
	def := 1
	if a, ok, _ := l.f.Array("tokenizer.ggml.tokens"); c.MoE.Gating == GatingSigmoid || ok && a.Len() == 154880 && (c.Layers == 47 || c.Layers == 48) {
		def = 2
	}
	fn := l.uint("expert_gating_func", def, false)
	m.Groups = l.uint("expert_group_count", 0, false)
	m.GroupsUsed = l.uint("expert_group_used_count", 0, false)
	shared := l.uint("expert_shared_count", 0, false)
	m.Scale = l.float("expert_weights_scale", 0)
	if l.err != nil {
		return l.err
	}
	norm, _, err := l.f.Bool(l.key("expert_weights_norm"))
	if err != nil {
		return err
	}
	m.Norm = norm
	switch fn {
	case 1:
		m.Gating = GatingSoftmax
	case 2:
		m.Gating = GatingSigmoid
	default:
		return bad("expert_gating_func", fmt.Sprintf("%d is not a gating function vkchat knows (1 softmax, 2 sigmoid)", fn))
	}
	switch {
	case m.Groups > maxGroups:
		return bad("expert_group_count", fmt.Sprintf("%d groups is implausibly many (at most %d)", m.Groups, maxGroups))
	case m.Groups > 1 && (m.Experts%m.Groups != 0 || m.Experts/m.Groups < 2):
		return bad("expert_group_count", fmt.Sprintf("%d groups must divide the %d experts into groups of at least 2", m.Groups, m.Experts))
	case m.Groups > 1 && (m.GroupsUsed == 0 || m.GroupsUsed > m.Groups || m.GroupsUsed*(m.Experts/m.Groups) < m.ExpertsUsed):
		return bad("expert_group_used_count", fmt.Sprintf("%d of %d groups cannot hold %d chosen experts", m.GroupsUsed, m.Groups, m.ExpertsUsed))
	case m.Scale < 0 || math.IsNaN(float64(m.Scale)) || math.IsInf(float64(m.Scale), 0):
		return bad("expert_weights_scale", fmt.Sprintf("%g must be a positive number (or 0 for none)", m.Scale))
	case shared > 64:
		return bad("expert_shared_count", fmt.Sprintf("%d is implausibly many", shared))
	}
	if m.Groups <= 1 {
		m.Groups, m.GroupsUsed = 0, 0
	}
	if shared > 0 && m.SharedFF == 0 {
		m.SharedFF = shared * m.ExpertFF
	}
	return nil
}
