package plan

import "vkchat/runtime/arch"

// Re-exported declaration types: what an op points at. They are aliases,
// not copies, so a plan shares the model's mapped weights.
type (
	Weight          = arch.Weight
	YaRN            = arch.YaRN
	Activation      = arch.Activation
	Gating          = arch.Gating
	DeltaNetShape   = arch.DeltaNetConfig
	DeltaNetWeights = arch.DeltaNet
	ShortConvConv   = arch.ShortConv
	PerLayerInput   = arch.PerLayerEmbd
	PerLayerWeights = arch.LayerPLE
	Widths          = arch.Widths
	MoEShape        = arch.MoEConfig
	Temperature     = arch.Temperature
	MLAShape        = arch.MLAConfig
	MLAWeights      = arch.MLA
	RouteRule       = arch.Rule
	Mamba2Shape     = arch.Mamba2Config
	Mamba2Weights   = arch.Mamba2
)

// The activations and gatings an op may name.
const (
	ActSiLU      = arch.ActSiLU
	ActGELUTanh  = arch.ActGELUTanh
	ActSwiGLUOAI = arch.ActSwiGLUOAI
	ActReLU2     = arch.ActReLU2

	GatingSoftmaxTopKNorm = arch.GatingSoftmaxTopKNorm
	GatingTopKSoftmax     = arch.GatingTopKSoftmax
	GatingSigmoid         = arch.GatingSigmoid
	GatingSoftmax         = arch.GatingSoftmax
)

// Buf names an activation buffer of a batch of tokens; an executor keeps
// one of each, sized by the widest layer.
type Buf uint8

const (
	X      Buf = iota // the residual stream [embd]
	In                // a branch's normalized input [embd]
	Q                 // queries [heads·head_dim]
	K                 // keys [kv_heads·head_dim]
	V                 // values [kv_heads·head_dim]
	Gate              // an FFN's gate half, or an attention output gate
	Up                // an FFN's up half
	Attn              // the attention output [heads·head_dim]
	Out               // a branch's output before the residual add [embd]
	Logits            // the head's output [vocab]
)

var bufNames = [...]string{"x", "in", "q", "k", "v", "gate", "up", "attn", "out", "logits"}

func (b Buf) String() string {
	if int(b) < len(bufNames) {
		return bufNames[b]
	}
	return "buf?"
}

// Op is one step of a forward pass. The concrete types below are the whole
// set; an executor switches on them and has no other way to learn what a
// model does.
type Op interface {
	isOp()
}

// Embed gathers each token's row of Table into X and multiplies it by
// Scale (√embd for Gemma, a granite multiplier; 1 for most).
type Embed struct {
	Table Weight
	Scale float32
}

// PerLayerInputs computes Gemma 4's per-layer embedding inputs for the
// batch from the token ids and X (arch.PerLayerEmbd says how); each
// layer's PerLayerEmbedding op reads its slice.
type PerLayerInputs struct {
	PLE *PerLayerInput
}

// Norm is an RMS norm of In into Out (the same buffer for an in-place
// norm): Width values per token in rows of Row values (a head for a
// per-head Q/K norm, the whole width otherwise), times Weight when there
// is one.
type Norm struct {
	In, Out    Buf
	Width, Row int
	Weight     *Weight // nil: no weight (Gemma 4's V norm)
	Eps        float32
}

// Product is one matrix-vector product of a Products op.
type Product struct {
	Out  Buf
	W    Weight
	Bias *Weight // added after the product; nil without
	// GatedHeads: W's rows hold [q_h | gate_h] per head of HeadDim; the q
	// halves go to Out and the gate halves to Gate (qwen35's gated
	// attention), for an AttnGate op after the attention.
	GatedHeads bool
	HeadDim    int // with GatedHeads
}

// Products runs products that read the same input together (Q, K and V;
// an FFN's gate and up), so an executor converts the input once.
type Products struct {
	In   Buf
	Outs []Product
}

// Rope rotates Bufs (Q, and K unless the layer reads another's cache) per
// head of HeadDim, the first Dims values of each, at each token's
// position. Table indexes Plan.Rotations: layers that rotate alike share
// one so that a position's angles are computed once.
type Rope struct {
	Bufs    []Buf
	Widths  []int // per buffer: values per token (its heads × HeadDim)
	HeadDim int
	Table   int
}

// Rotation is one RoPE: which pairs rotate (NeoX: (i, i+Dims/2), else
// adjacent), the frequency base, the position multiplier, the cos/sin
// multiplier, per-pair frequency divisors and YaRN's blend.
type Rotation struct {
	Dims       int
	NeoX       bool
	Base       float32
	Scale      float32 // positions × Scale (1/linear factor)
	AttnFactor float32 // cos and sin ×
	Factors    []float32
	YaRN       *YaRN
}

// Scale multiplies a buffer by By (Q by the attention scale where the model
// scales Q rather than the scores; the logits by a granite multiplier).
type Scale struct {
	Buf   Buf
	Width int // values per token
	By    float32
}

// PositionScale multiplies each token's Width values of Buf by T.At(its
// position): the attention temperature tuning of Q (mistral3), after RoPE
// and before the attention rounds Q.
type PositionScale struct {
	Buf   Buf
	Width int
	T     Temperature
}

// Softcap maps a buffer through Cap·tanh(x/Cap) (Gemma 2's final logits).
type Softcap struct {
	Buf   Buf
	Width int
	Cap   float32
}

// Attention is causal multi-head attention of Q over the keys and values
// in cache slot Cache, with Heads query heads sharing KVHeads key/value
// heads of HeadDim. Unless Shared, the batch's K and V are written to the
// slot first. Scores are × Scale, then Softcap·tanh(s/Softcap) when
// Softcap > 0; a key more than Window-1 positions back is masked when
// Window > 0; Sinks, when present, is a per-head logit that joins each
// softmax with no value.
type Attention struct {
	Heads, KVHeads, HeadDim int
	Scale, Softcap          float32
	Window                  int
	Sinks                   *Weight
	Cache                   int
	Shared                  bool
}

// MLA is multi-head latent attention (deepseek2) of In into Attn (Heads
// value heads of Shape.V per token), in the absorbed form llama.cpp runs:
//
//	q = Q·(rms(QA·x)·QANorm), or Q·x without QA   per head [nope | rope]
//	a = KVA·x = [latent | k_rope];  c = rms(latent)·KVANorm
//	RoPE (rotation Table) on each head's q rope part and on k_rope
//	per head h: query [KB_hᵀ·q_nope_h | q_rope_h], key [c | k_rope] (one
//	row per token shared by every head: cache slot Cache holds it),
//	value c; softmax(Scale · q·k) over the positions;  Attn_h = VB_h·Σ p·c
type MLA struct {
	In    Buf
	Heads int
	Shape MLAShape
	W     *MLAWeights
	Scale float32
	Eps   float32
	Table int
	Cache int
}

// AttnGate multiplies Attn by σ(Gate), Width values per token (qwen35's
// gated attention).
type AttnGate struct {
	Width int
}

// GLU writes Act(Gate)·Up into Gate, Width values per token; for an
// ungated activation (ReLU²) Act(Gate) alone, and Up is not read.
type GLU struct {
	Width int
	Act   Activation
}

// Expert is expert e's gate, up and down matrices: runs of rows of the
// banks, sharing their memory.
func (o MoE) Expert(e int) (gate, up, down Weight) {
	x := arch.Experts{Router: o.Router, Gate: o.Gate, Up: o.Up, Down: o.Down, FusedGateUp: o.FusedGateUp}
	return x.Expert(e)
}

// MoE routes each token of In to K of Experts experts by Gating over the
// Router's logits (+ RouterBias) and writes the weighted sum of their
// FFNs (gate, up: FF rows per expert; down: embd rows per expert; with
// per-expert biases where present; no gate bank for an ungated Act)
// into Out.
//
// Rule carries the gating and, for GatingSigmoid and GatingSoftmax, the
// rest of the rule: SelectBias (exp_probs_b), added to the probabilities
// only to choose the experts, the group limit, the renormalisation and
// the routed scale (arch.Rule.Route).
//
// Gemma 4's experts beside a dense FFN add: the router reading RouterIn in
// place of In; each expert's output × its DownScale element before its
// routing weight; the sum RMS-normed × PostNorm; and with Add, the result
// added to Out (where the dense branch already is) rather than written.
type MoE struct {
	In, Out                    Buf
	Gating                     Gating
	Rule                       RouteRule
	SelectBias                 *Weight
	Experts, K, FF             int
	Act                        Activation
	Router                     Weight
	RouterBias                 *Weight
	RouterIn                   *RouterInput
	Gate, Up, Down             Weight
	FusedGateUp                bool // Gate holds each expert's FF gate rows, then its FF up rows; Up is empty
	GateBias, UpBias, DownBias *Weight
	DownScale                  *Weight // [experts], F32
	PostNorm                   *Weight
	Eps                        float32 // PostNorm's
	Add                        bool
}

// RouterInput is what a router reads when not its experts' input:
// rms(From) × Scale ⊙ Weight, in that order (Gemma 4: the stream, 1/√embd,
// ffn_gate_inp.scale).
type RouterInput struct {
	From   Buf
	Scale  float32
	Weight Weight
	Eps    float32
}

// SharedExpert adds to Out a dense FFN of In: Act-gated (down(act(gate·In)
// ⊙ up·In)), or for an ungated Act down(act(up·In)) with no Gate, × σ(Scale·In)
// where Scale is present (qwen35moe), else as it is (granitehybrid,
// nemotron_h_moe).
type SharedExpert struct {
	In, Out        Buf
	Act            Activation
	Gate, Up, Down Weight
	Scale          Weight // Data nil: no σ gate
}

// DeltaNet is a Gated DeltaNet mixer of In into Out, keeping its conv and
// delta-rule state in state slot State.
type DeltaNet struct {
	In, Out Buf
	Shape   DeltaNetShape
	W       *DeltaNetWeights
	State   int
	Eps     float32
}

// ShortConv is LFM2's short-convolution mixer of In into Out, its last
// L-1 inputs kept in state slot State.
type ShortConv struct {
	In, Out Buf
	L       int
	W       *ShortConvConv
	State   int
}

// Mamba2 is a Mamba2 mixer of In into Out (runtime/arch/mamba2.go),
// keeping its last conv inputs and its scan state in state slot State;
// Eps is the grouped norm's.
type Mamba2 struct {
	In, Out Buf
	Shape   Mamba2Shape
	W       *Mamba2Weights
	State   int
	Eps     float32
}

// Residual adds Branch to X, after an RMS norm by PostNorm when there is
// one and × Scale.
type Residual struct {
	Branch   Buf
	PostNorm *Weight
	Eps      float32
	Scale    float32
}

// PerLayerEmbedding adds layer Layer's per-layer embedding term to X
// (Gemma 4 E2B/E4B): rms(Proj·(gelu(Gate·X) ⊙ input))·Norm.
type PerLayerEmbedding struct {
	Layer int
	W     *PerLayerWeights
	Eps   float32
}

// ScaleStream multiplies X by the one value of W (Gemma 4's
// layer_output_scale).
type ScaleStream struct {
	W Weight
}

func (Embed) isOp()             {}
func (PerLayerInputs) isOp()    {}
func (Norm) isOp()              {}
func (Products) isOp()          {}
func (Rope) isOp()              {}
func (Scale) isOp()             {}
func (PositionScale) isOp()     {}
func (Softcap) isOp()           {}
func (Attention) isOp()         {}
func (MLA) isOp()               {}
func (AttnGate) isOp()          {}
func (GLU) isOp()               {}
func (MoE) isOp()               {}
func (SharedExpert) isOp()      {}
func (DeltaNet) isOp()          {}
func (ShortConv) isOp()         {}
func (Mamba2) isOp()            {}
func (Residual) isOp()          {}
func (PerLayerEmbedding) isOp() {}
func (ScaleStream) isOp()       {}
