package arch

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// Weight is a tensor used as a matrix of Rows rows of Cols elements (GGUF
// dims [Cols, Rows]); a vector has Rows == 1. Data points into the mapped file.
type Weight struct {
	Name string
	Type ggml.Type
	Cols int
	Rows int
	Data []byte
}

// Layer holds one transformer block's weights. Shapes are [Cols x Rows]:
// Wq [embd x heads*headDim], Wk/Wv [embd x kvHeads*headDim],
// Wo [heads*headDim x embd], Gate/Up [embd x ff], Down [ff x embd].
//
// A fused attn_qkv or gate|up ffn_up is split into Wq/Wk/Wv or Gate/Up by
// rows at load (rows are contiguous in every type), so backends see one
// shape of layer. Optional weights are nil when the recipe has no use for
// them; AttnNorm and FFNNorm are zero Weights (Data nil) without PreNorm.
type Layer struct {
	Config                   LayerConfig
	AttnNorm, Wq, Wk, Wv, Wo Weight
	Bq, Bk, Bv               *Weight  // attention biases (Qwen2; optional elsewhere)
	Bo                       *Weight  // attn_output bias (gpt-oss)
	Sinks                    *Weight  // attention sinks [heads] (gpt-oss)
	QNorm, KNorm             *Weight  // Block.QKNorm: [head_dim] per head, or the full width
	PostAttnNorm             *Weight  // Block.PostNorm
	FFNNorm, Gate, Up, Down  Weight   // the dense FFN; zero Weights where Experts replace it
	Experts                  *Experts // Config.MoE: the routed experts in place of Gate/Up/Down
	PostFFNNorm              *Weight  // Block.PostNorm
	// PostDenseNorm: the dense FFN's own post-norm where experts run
	// beside it (Arch.ExpertsBesideDense: post_ffw_norm_1), else nil.
	PostDenseNorm *Weight

	// DeltaNet is a Gated DeltaNet layer's mixer in place of attention
	// (Config.Kind KindDeltaNet; qwen35.go), else nil.
	DeltaNet *DeltaNet

	// ShortConv is a KindShortConv layer's mixer, in place of the
	// attention weights (lfm2.go).
	ShortConv *ShortConv

	// MLA is a latent-attention layer's weights in place of Wq/Wk/Wv
	// (deepseek2.go); nil otherwise.
	MLA *MLA
	// Mamba2 is a KindMamba2 layer's mixer (mamba2.go), else nil.
	Mamba2 *Mamba2

	// Gemma 4: layer_output_scale [1], which multiplies the stream after
	// the layer, and the layer's per-layer embedding weights; nil without.
	OutScale *Weight
	PLE      *LayerPLE
}

// Model is a loaded model description; the backends turn it into compute.
type Model struct {
	Config
	Name       string
	File       *gguf.File
	TokenEmbd  Weight // [embd x vocab]
	OutputNorm Weight // [embd]
	Output     Weight // [embd x vocab]; the token embedding when tied
	Tied       bool
	Layers     []Layer
	PLE        *PerLayerEmbd // per-layer embeddings (gemma4 E2B/E4B); nil without
	// MTP is the multi-token-prediction head (mtp.go); nil when the file
	// has none or the architecture declares none.
	MTP *MTP
}

// Config holds the hyper-parameters of the forward pass.
type Config struct {
	Arch     string
	Embd     int
	FF       int
	Layers   int
	Heads    int
	KVHeads  int
	HeadDim  int
	Vocab    int
	TrainCtx int
	NormEps  float32
	Rope     Rope // the global RoPE; a layer's LayerConfig may change base and scale

	Block Block // the recipe every layer follows
	// Multipliers, resolved from the declaration (1 when unused).
	EmbedScale    float32 // token embeddings × EmbedScale
	ResidualScale float32 // each branch × ResidualScale before its residual add
	AttnScale     float32 // attention scores × AttnScale (1/√head_dim unless the file says)
	ScaleQ        bool    // apply AttnScale to Q after RoPE instead of to the scores
	LogitScale    float32 // logits × LogitScale (granite: 1/logit_scale)
	// QTemperature: the attention temperature tuning of Q; Beta 0 = off.
	QTemperature Temperature
	// Soft-caps c·tanh(x/c); 0 = off.
	AttnSoftcap  float32
	FinalSoftcap float32
	// MoE: every layer's FFN is a mixture of experts when MoE.Experts > 0.
	MoE MoEConfig
	// DeltaNet: the shape of the Gated DeltaNet layers, which are all but
	// every FullAttnEvery-th (qwen35.go); zero without them.
	DeltaNet      DeltaNetConfig
	FullAttnEvery int
	// ShortConvL is the short convolution's kernel length (lfm2's
	// shortconv.l_cache), whose state keeps the last ShortConvL-1 inputs,
	// and ShortConvLayers how many layers are short convolutions (lfm2.go).
	ShortConvL, ShortConvLayers int
	// MLA is the latent attention's shape (deepseek2.go), zero without;
	// LeadDense is how many first layers keep a dense FFN in a model
	// with experts.
	MLA       MLAConfig
	LeadDense int
	// NextN is how many multi-token-prediction blocks follow the Layers
	// in the file (nextn_predict_layers; mtp.go); they are not in Layers.
	NextN int
	// Mamba2 is the shape of the Mamba2 layers (mamba2.go); zero without.
	Mamba2 Mamba2Config
}

// Temperature is llama.cpp's attention temperature tuning (llama-graph.cpp,
// llm_graph_input_attn_temp): Q, after RoPE, is multiplied per position by
// 1 + Beta·ln(1 + ⌊(pos+Offset)/Length⌋); K is not (mistral3).
type Temperature struct {
	Beta   float32
	Length int
	Offset float32
}

// At is the multiplier at position pos, computed as llama.cpp computes it:
// the quotient in float, the log in double, stored as a float.
func (t Temperature) At(pos int) float32 {
	q := (float32(pos) + t.Offset) / float32(t.Length)
	f := math.Floor(float64(q))
	return float32(math.Log(f+1)*float64(t.Beta) + 1)
}

// Rope describes rotary position embedding.
type Rope struct {
	Dims int     // rotated dimensions per head (<= HeadDim)
	Base float32 // theta base
	// NeoX rotates pairs (i, i+Dims/2) as GPT-NeoX and Qwen2 do; otherwise
	// adjacent pairs (2i, 2i+1), llama.cpp's "normal" mode for llama, whose
	// converter permutes Q and K to match.
	NeoX bool
	// FreqFactors divides the frequency of each pair (Llama 3.1 rope
	// scaling); nil when unused.
	FreqFactors []float32
	// Scale multiplies positions (linear rope scaling); 1 when unused.
	Scale float32
	// AttnFactor multiplies cos and sin (rope.scaling.attn_factor, as
	// ggml's mscale); 1 when unused.
	AttnFactor float32
	// LongFactors and ShortFactors are LongRoPE's per-pair divisors (phi3's
	// rope_factors_long/short); nil when absent. Which one applies depends
	// on the context size: see Factors.
	LongFactors, ShortFactors []float32
	// OrigCtx is rope.scaling.original_context_length (0 when absent).
	OrigCtx int
	// YaRN, when set, blends interpolated and original angles per pair
	// (rope.scaling.type yarn); Scale is then 1/factor.
	YaRN *YaRN
}

// YaRN is the rotation's blend of interpolation (angle × Scale) and
// extrapolation (the original angle) across pairs, as ggml's rope_yarn
// computes it: pairs below Low keep the original angle, pairs above High
// are interpolated, a linear ramp between; cos and sin are multiplied by
// MScale (1 + 0.1·ln factor).
type YaRN struct {
	Low, High float32 // ggml's corr_dims: floor and ceil of the pair index where β_fast and β_slow rotations fit the original context
	MScale    float32
}

// Factors returns the per-pair frequency divisors for a context of ctx
// positions: rope_freqs when present, else LongRoPE's long set when ctx
// exceeds the original context and its short set otherwise (llama.cpp
// chooses by the sequence's context size), else nil.
func (r *Rope) Factors(ctx int) []float32 {
	switch {
	case r.FreqFactors != nil:
		return r.FreqFactors
	case r.LongFactors != nil && r.OrigCtx > 0 && ctx > r.OrigCtx:
		return r.LongFactors
	case r.ShortFactors != nil:
		return r.ShortFactors
	}
	return r.LongFactors
}

// Params counts the parameters of all tensors in the file.
func (m *Model) Params() int64 {
	var n int64
	for i := range m.File.Tensors {
		n += int64(m.File.Tensors[i].Elements())
	}
	return n
}

// WeightBytes is the size of all tensor data.
func (m *Model) WeightBytes() int64 {
	var n int64
	for i := range m.File.Tensors {
		n += int64(m.File.Tensors[i].Size)
	}
	return n
}

// FileType is the most common matrix weight type, by bytes.
func (m *Model) FileType() string {
	bytes := map[ggml.Type]uint64{}
	for i := range m.File.Tensors {
		t := &m.File.Tensors[i]
		if len(t.Dims) >= 2 {
			bytes[t.Type] += t.Size
		}
	}
	types := make([]ggml.Type, 0, len(bytes))
	for t := range bytes {
		types = append(types, t)
	}
	sort.Slice(types, func(a, b int) bool { return bytes[types[a]] > bytes[types[b]] })
	if len(types) == 0 {
		return "none"
	}
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.String()
	}
	if len(names) > 1 {
		return names[0] + " (+" + strings.Join(names[1:], ",") + ")"
	}
	return names[0]
}

// KVBytesPerToken is what one position costs in the KV cache at the given
// element size, summed over the layers that own a cache (a KV-shared layer
// reads another's, a recurrent one keeps a state), each at its own width
// (a latent-attention layer's one row: kvValues).
func (m *Model) KVBytesPerToken(elemBytes int) int64 {
	var n int64
	for i := range m.Layers {
		if m.OwnsKV(i) {
			n += int64(m.kvValues(i))
		}
	}
	return n * int64(elemBytes)
}

// kvValues is what layer i caches per position: a key row and a value
// row, or a latent-attention layer's one row of latent and RoPE key (its
// values are the latent part of it).
func (m *Model) kvValues(i int) int {
	if m.Layers[i].MLA != nil {
		return m.MLA.CacheRow()
	}
	return 2 * m.Layers[i].Config.KVWidth()
}

// OwnsKV reports whether layer i has a KV cache of its own: an attention
// layer that does not read another layer's.
func (m *Model) OwnsKV(i int) bool {
	lc := &m.Layers[i].Config
	return lc.Kind == KindAttention && !lc.SharesKV(i)
}

// KVBytes is the whole KV cache for a context of ctx positions at the given
// element size, each sliding-window layer holding only its window and a
// KV-shared layer nothing of its own. A size past int64 saturates at
// math.MaxInt64: a memory estimate must read as "more than any machine
// has", never wrap to a negative size that passes a check.
func (m *Model) KVBytes(ctx, elemBytes int) int64 {
	var n int64
	for i := range m.Layers {
		if m.OwnsKV(i) {
			lc := &m.Layers[i].Config
			n = SatAdd(n, SatMul(int64(lc.KVPositions(ctx)), int64(m.kvValues(i))))
		}
	}
	return SatMul(n, int64(elemBytes))
}

// SatMul is a*b for sizes (a, b >= 0), saturating at math.MaxInt64; a
// negative operand gives 0, as no size is negative.
func SatMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// SatAdd is a+b for sizes, saturating at math.MaxInt64; a negative
// operand counts as 0.
func SatAdd(a, b int64) int64 {
	a, b = max(a, 0), max(b, 0)
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// KVWidth is one position's key (or value) row: kv_heads × head_dim.
func (l *LayerConfig) KVWidth() int { return l.KVHeads * l.HeadDim }

// KVPositions is how many positions a layer's cache holds for a context of
// ctx: a sliding-window layer needs only its window (it is used as a ring).
func (l *LayerConfig) KVPositions(ctx int) int {
	if l.Kind != KindAttention {
		return 0 // a state or nothing, no cache
	}
	if l.Window > 0 && l.Window < ctx {
		return l.Window
	}
	return ctx
}

type loader struct {
	f    *gguf.File
	arch string
	err  error
}

func (l *loader) key(k string) string { return l.arch + "." + k }

func (l *loader) uint(k string, def int, required bool) int {
	if l.err != nil {
		return 0
	}
	n, ok, err := l.f.Uint(l.key(k))
	if err != nil {
		l.err = err
		return 0
	}
	if !ok {
		if required {
			l.err = &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(k)), Msg: "missing"}
		}
		return def
	}
	// Sizes beyond this are not models we can run and would overflow int
	// arithmetic in buffer sizing further on.
	if n > 1<<24 {
		l.err = &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(k)), Msg: fmt.Sprintf("value %d is implausibly large", n)}
		return 0
	}
	return int(n)
}

func (l *loader) float(k string, def float32) float32 {
	if l.err != nil {
		return 0
	}
	x, ok, err := l.f.Float(l.key(k))
	if err != nil {
		l.err = err
		return 0
	}
	if !ok {
		return def
	}
	return float32(x)
}
