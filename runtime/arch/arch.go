package arch

// An architecture is declared, not programmed: Arch says which keys and
// tensors a GGUF file of that architecture carries and which variant of the
// one transformer block it runs. Load resolves a declaration against a file
// into Config (model-wide numbers and the Block recipe) and Layer weights,
// and runtime/plan resolves those into the ops both backends run, so adding
// an architecture is a new declaration in a file of its own (llama.go,
// qwen3.go, ...), not a new forward pass. llama.cpp's src/models/*.cpp and ../shared/docs/
// architectures.md are the source of each declaration's facts.

// QKNorm says whether and how Q and K are RMS-normalized before RoPE.
type QKNorm uint8

const (
	QKNormNone QKNorm = iota
	// QKNormHead normalizes each head's head_dim values with one shared
	// [head_dim] weight (qwen3, gemma3).
	QKNormHead
	// QKNormFull normalizes the whole projection (all heads together) with
	// a [heads*head_dim] / [kv_heads*head_dim] weight (olmo2).
	QKNormFull
)

// Activation is the FFN's gate nonlinearity: out = down(act(gate·x) * up·x).
type Activation uint8

const (
	ActSiLU Activation = iota
	// ActGELUTanh is GELU in its tanh form; llama.cpp's CPU backend reads it
	// from an F16 table (x rounded to F16, result in F16; identity for
	// x >= 10, zero for x <= -10).
	ActGELUTanh
	// ActSwiGLUOAI is gpt-oss's clamped SwiGLU: g = min(gate, 7),
	// u = clamp(up, -7, 7), out = g·σ(1.702·g)·(u+1).
	ActSwiGLUOAI
	// ActReLU2 is ReLU squared with no gate: out = down(max(up·x, 0)²)
	// (nemotron_h's FFN and experts).
	ActReLU2
)

// Gated reports whether the FFN multiplies the activation by an up
// projection (a gate matrix beside up); ReLU² has none.
func (a Activation) Gated() bool { return a != ActReLU2 }

func (a Activation) String() string {
	switch a {
	case ActGELUTanh:
		return "gelu-tanh"
	case ActSwiGLUOAI:
		return "swiglu-oai (clamped at 7, α 1.702, up+1)"
	case ActReLU2:
		return "relu²"
	}
	return "silu"
}

// OutputRule says where the output projection comes from.
type OutputRule uint8

const (
	OutputOrTied   OutputRule = iota // output.weight if present, else token_embd
	OutputTiedOnly                   // always token_embd; output.weight is an error (gemma2)
	OutputRequired                   // output.weight must be present (olmo2)
)

// Arch is one architecture's declaration.
type Arch struct {
	Name string

	// Rope pairing: NeoX rotates (i, i+dims/2), otherwise adjacent pairs.
	NeoX bool
	// NoRopeEvery > 0 skips RoPE on layers where (il+1) % NoRopeEvery == 0
	// (smollm3: 4).
	NoRopeEvery int
	// RopeFinetunedKey, when set, names a bool key; false turns RoPE off on
	// every layer (granite's rope.scaling.finetuned, default true).
	RopeFinetunedKey string

	// Tensors.
	QKVBias Need // attn_{q,k,v}.bias
	OutBias Need // attn_output.bias (gpt-oss)
	// Sinks: attn_sinks [heads], a per-head logit that joins every
	// softmax, takes probability mass and has no value (gpt-oss).
	Sinks bool
	// FFNNorm names the FFN's pre-norm tensor when it is not ffn_norm
	// (gpt-oss: post_attention_norm).
	FFNNorm     string
	FusedQKV    bool // attn_qkv (Q|K|V rows) accepted in place of attn_q/k/v
	FusedGateUp bool // ffn_up holds gate rows then up rows; no ffn_gate (phi3)
	Output      OutputRule
	// KeyLength: attention.key_length may set head_dim apart from
	// embd/heads (qwen3, gemma2/3); otherwise it must equal embd/heads.
	KeyLength bool
	// YaRNKeys: a YaRN file's rope.scaling.yarn_beta_fast/_slow set the
	// ramp (llama.cpp's defaults otherwise) and its
	// rope.scaling.yarn_log_multiplier (mscale_all_dim, stored as is)
	// sets the rotation's magnitude as llama.cpp's context does (mistral3).
	YaRNKeys bool
	// TemperatureKey names the key of the attention temperature tuning's
	// β: Q after RoPE × 1 + β·ln(1 + ⌊pos/L⌋), L the original context
	// (mistral3: attention.temperature_scale); "", an absent key or 0 = off.
	TemperatureKey string

	// The block recipe.
	Block Block

	// Embeddings multiplied by √embd (gemma).
	EmbedScaleSqrt bool
	// Keys of multipliers (granite); "" = not read. Absent or 0 = off.
	EmbedScaleKey    string // embeddings × value
	ResidualScaleKey string // each branch × value before its residual add
	AttnScaleKey     string // attention score scale in place of 1/√head_dim
	LogitScaleKey    string // logits ÷ value (granite: required)
	LogitScaleNeeded bool

	// Attention and final-logit soft-caps: value·tanh(x/value). The key's
	// default applies when the key is absent; 0 = off.
	AttnSoftcap  Capped
	FinalSoftcap Capped

	// AttnScaleEmbdLayers: a model with exactly this many layers scales
	// attention by 1/√(embd/heads) instead of 1/√head_dim (llama.cpp's rule
	// for Gemma 2 27B, 46 layers, and Gemma 3 27B, 62); 0 = never.
	AttnScaleEmbdLayers int

	// ScaleQ applies the attention scale to Q (after RoPE, before the
	// F16 rounding of the KV path) rather than to the scores (gemma, phi3);
	// the same number, rounded where llama.cpp rounds it.
	ScaleQ bool

	// Sliding-window attention; zero value = none.
	SWA SlidingWindow

	// Gating: every layer's FFN is a mixture of experts routed this way
	// (moe.go); GatingNone = dense, and a file with experts is refused.
	Gating Gating
	// ExpertsBesideDense: a layer with a router (ffn_gate_inp) runs its
	// experts beside its dense FFN rather than in place of it (gemma4
	// 26B-A4B): each branch has its own pre- and post-norm, the router
	// reads rms(x)/√embd ⊙ ffn_gate_inp.scale, each expert's output is ×
	// its ffn_down_exps.scale, and the branches' sum goes through
	// post_ffw_norm. A file without expert_count is dense.
	ExpertsBesideDense bool
	// SharedExpert: a routed FFN also runs ffn_{gate,up,down}_shexp,
	// scaled by σ(ffn_gate_inp_shexp·x), when the file has them (qwen35moe);
	// SharedUngated: without that scale (deepseek2).
	SharedExpert, SharedUngated bool
	// RoutingKeys: the routing rule is read from the file's expert_* keys
	// (gating function, weights norm and scale, groups, shared count;
	// loadRouting), Gating being only the default.
	RoutingKeys bool
	// MLA: attention is multi-head latent attention (deepseek2.go), and
	// leading_dense_block_count layers keep a dense FFN before the experts.
	MLA bool
	// MoEOptional: a file without expert_count has a dense FFN
	// (granitehybrid: H-Micro is dense, Tiny and Small route).
	MoEOptional bool
	// ExpertFFIsFF: the experts' width is feed_forward_length; there is
	// no expert_feed_forward_length (granitehybrid).
	ExpertFFIsFF bool

	// Mamba2: a layer whose attention.head_count_kv entry is 0 is a
	// Mamba2 layer (mamba2.go).
	Mamba2 bool
	// SingleBranch: each layer is one pre-normed branch (attn_norm) —
	// its mixer, or, where feed_forward_length is not 0, its FFN alone
	// (nemotron_h).
	SingleBranch bool
	// NoRope: no layer rotates (nemotron_h: llama.cpp's rope type none).
	NoRope bool

	// DeltaNet: the layers between full-attention ones are Gated DeltaNet
	// layers (qwen35.go).
	DeltaNet bool
	// MTP: the file may end with a multi-token-prediction (NextN) block
	// that the main pass never runs, counted in block_count and by
	// nextn_predict_layers (qwen35, qwen35moe; mtp.go).
	MTP bool

	// OutputNorm names the final norm's tensor when it is not
	// output_norm.weight (lfm2: token_embd_norm.weight).
	OutputNorm string
	// ShortConv: a layer whose attention.head_count_kv entry is 0 is a
	// short-convolution layer (lfm2.go).
	ShortConv bool
	// AttnScaleFixed, when non-zero, is the attention scale in place of
	// 1/√head_dim (gemma4: 1, its Q/K norms do the scaling).
	AttnScaleFixed float32
	// PerLayer resolves geometry that differs between layers (head size,
	// KV heads, FF width, shared KV caches) and reads the tensors beyond
	// the block recipe (gemma4.go); nil for uniform models.
	PerLayer *PerLayerDecl
}

// Need is whether an optional group of tensors is read.
type Need uint8

const (
	Never    Need = iota
	Optional      // read when present
	Required
)

// Capped is a soft-cap value read from a key, with its default.
type Capped struct {
	Key     string
	Default float32
}

// SlidingWindow declares which layers attend only to a window of recent keys.
// A key at position k is visible from query position q when q-k < window.
type SlidingWindow struct {
	// Key holding the window (attention.sliding_window); "" = no SWA.
	Key string
	// DefaultWindow when the key is absent; 0 means "no key, no SWA"
	// (gemma3, olmo2); gemma2 defaults to 4096.
	DefaultWindow int
	// Period: layer il is local when il % Period < Period-1
	// (gemma2 2, gemma3 6, olmo2 4). PeriodKey may override it.
	Period    int
	PeriodKey string
	// LocalBaseKey: local layers' RoPE base (rope.freq_base_swa); "" or
	// absent = the global base. LocalBaseDefault applies when the key is
	// absent and non-zero (gemma3: 10000).
	LocalBaseKey     string
	LocalBaseDefault float32
	// LocalUnscaled: local layers ignore linear rope scaling (gemma3, olmo2).
	LocalUnscaled bool
	// Disabled: the key is read but SWA is not used (phi3).
	Disabled bool
}

// Block is the recipe every layer follows, resolved for one model:
//
//	a = PreNorm ? rms(x)·attn_norm : x
//	q,k,v = Wq·a (+bq), Wk·a (+bk), Wv·a (+bv)
//	q,k = QKNorm(q), QKNorm(k); rope(q,k) unless the layer is NoPE
//	o = Wo·attention(q, k, v)            (scale, soft-cap, window)
//	x = x + ResidualScale · (PostNorm ? rms(o)·post_attention_norm : o)
//	f = PreNorm ? rms(x)·ffn_norm : x
//	o = down(act(gate·f) * up·f)
//	x = x + ResidualScale · (PostNorm ? rms(o)·post_ffw_norm : o)
//
// and the head: logits = FinalSoftcap(LogitScale · output·rms(x)·output_norm).
type Block struct {
	PreNorm  bool // attn_norm and ffn_norm (all but olmo2)
	PostNorm bool // post_attention_norm and post_ffw_norm (gemma2/3, olmo2)
	QKNorm   QKNorm
	Act      Activation
	// AttnGate: attn_q's rows hold [q_h | gate_h] per head and the
	// attention output is × σ(gate) before attn_output (qwen35).
	AttnGate bool
	// VNorm: V is RMS-normalized per head without a weight (gemma4).
	VNorm bool
}

// LayerKind is what mixes positions in a layer: attention over a KV cache,
// or a recurrence over a fixed-size state (hybrid models).
type LayerKind uint8

const (
	KindAttention LayerKind = iota
	// KindDeltaNet is a Gated DeltaNet layer (qwen35, qwen35moe): causal
	// conv, then the delta-rule state update per value head.
	KindDeltaNet
	// KindShortConv is a short-convolution layer (lfm2).
	KindShortConv
	// KindMamba2 is a Mamba2 layer: causal conv, then the selective scan
	// (nemotron_h, granitehybrid).
	KindMamba2
	// KindFFN is a layer with no mixer, only an FFN (nemotron_h's MLP
	// and MoE layers): it keeps neither a KV cache nor a state.
	KindFFN
)

func (k LayerKind) String() string {
	switch k {
	case KindDeltaNet:
		return "deltanet"
	case KindShortConv:
		return "shortconv"
	case KindMamba2:
		return "mamba2"
	case KindFFN:
		return "ffn"
	}
	return "attention"
}

// Recurrent says whether the layer keeps a state instead of a KV cache.
func (k LayerKind) Recurrent() bool {
	return k == KindDeltaNet || k == KindShortConv || k == KindMamba2
}

// LayerConfig is what differs between layers of one model.
type LayerConfig struct {
	Kind      LayerKind
	Rope      bool    // false on NoPE layers
	RopeBase  float32 // theta base for this layer
	RopeScale float32 // position multiplier (1/linear factor; 1 = none)
	// Window > 0: keys with query_pos - key_pos >= Window are masked, and
	// the layer's KV cache need hold only Window positions.
	Window int

	// The layer's geometry, resolved for every architecture: the model's
	// HeadDim, KVHeads, FF and Rope.Dims unless the file sets them per
	// layer (gemma4: sliding layers have their own head size and RoPE
	// dims; head_count_kv and feed_forward_length may be arrays).
	HeadDim, KVHeads, FF, RopeDims int
	// NoRopeFactors: the layer ignores Rope.FreqFactors (gemma4's sliding
	// layers; rope_freqs is its full layers' proportional RoPE).
	NoRopeFactors bool
	// KVLayer is the layer whose KV cache this layer attends to: itself,
	// or for a KV-shared layer (gemma4's last shared_kv_layers) the last
	// earlier layer of its kind, and then it computes only Q.
	KVLayer int
	// DenseFFN: a layer of a mixture-of-experts model whose FFN is dense
	// (deepseek2's leading_dense_block_count first layers).
	DenseFFN bool
}

// SharesKV reports whether layer il reads another layer's cache.
func (l *LayerConfig) SharesKV(il int) bool { return l.KVLayer != il }

var archs = map[string]Arch{}

func register(a Arch) { archs[a.Name] = a }

// Lookup returns the declaration of a supported architecture.
func Lookup(name string) (Arch, bool) {
	a, ok := archs[name]
	return a, ok
}
