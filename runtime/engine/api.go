// Package engine is the inference API the UI and commands use: load a model
// into a session, generate replies as a stream of events, change sampler
// settings while generating.
package engine

import (
	"time"

	"vkchat/runtime/backend"
	"vkchat/runtime/chat"
)

// ErrDeviceLost marks errors after which the backend cannot continue; the
// session can go on after SwitchBackend("cpu").
var ErrDeviceLost = backend.ErrDeviceLost

// ModelInfo describes the loaded model and how it is being run.
type ModelInfo struct {
	Name         string
	Path         string
	Arch         string
	Params       int64  // parameter count
	FileType     string // the dominant weight type, e.g. "Q4_0"
	ContextSize  int    // the session's context window
	TrainContext int    // the model's trained context length
	Vocab        int
	Layers       int
	KVHeads      int
	HeadDim      int
	KVType       string // the cache type, "f16", "q8_0", ...; "keys/values" where they differ
	// KVLayout is the KV cache as groups of layers alike in positions
	// held and width, full layers first, and KVShared the layers that
	// read another layer's cache and hold none; set only where layers
	// differ in width or share caches (gemma4), nil where Layers ×
	// KVHeads × HeadDim (and Stats.KVWindows) say it all.
	KVLayout []KVGroup
	KVShared int
	// KVSharing is each KV-shared layer and the earlier layer whose cache
	// it reads, in layer order (what vkchat info writes as "4→2").
	KVSharing []KVShare
	// PLE is the per-layer embedding table (gemma4 E2B/E4B); zero without.
	PLE PLEInfo
	// Experts and ExpertsUsed are, for a mixture-of-experts model, the
	// routed experts of each MoE layer and how many of them one token
	// runs (TokenInfo.Experts says which); 0 for a dense model.
	Experts, ExpertsUsed int
	// Gating is the routing rule in a line (arch.Model.RoutingRule): the
	// gating, and what the router reads and how outputs are scaled where
	// the model says; "" for a dense model.
	Gating string
	// RecurrentLayers counts a hybrid model's layers that keep a state
	// instead of a KV cache (Layers less these have a KV cache), and
	// LayerKinds names each layer's kind in order ("shortconv",
	// "attention", ...); 0 and nil for attention-only models.
	RecurrentLayers int
	LayerKinds      []string
	// MLA is the shape of multi-head latent attention (deepseek2), whose
	// cache holds one row of Latent + Rope values a position for keys and
	// values both; nil for other attention.
	MLA *MLAInfo
	// FFNLayers counts the layers that are an FFN alone (nemotron_h's
	// MLP and MoE layers): they keep neither a cache nor a state.
	FFNLayers int
	// TemplateName is the chat template in use: "gguf" for the model's own,
	// or a built-in ("chatml", "llama2", "llama3", "zephyr", "phi3"); "" in
	// completion mode.
	TemplateName string
	// TemplateNote says why the model's own chat template is not the one
	// in use (a built-in in its place, or completion mode); "" when it is.
	TemplateNote string
	Completion   bool // no chat template: the conversation is plain text
	Backend      string
	// BackendReason says why Backend runs: asked for by name, or what
	// --backend auto found (a GPU, or only a CPU Vulkan driver).
	BackendReason string
	Device        string
	LoadTime      time.Duration
}

// AttentionLayers counts the layers with a KV cache: all but the
// recurrent ones and the FFN-only ones.
func (i ModelInfo) AttentionLayers() int { return i.Layers - i.RecurrentLayers - i.FFNLayers }

// KVGroup is layers whose caches hold Positions positions (a window's
// ring, or the context) of KVHeads × HeadDim keys and values.
type KVGroup struct {
	Layers, Positions, Window, KVHeads, HeadDim int
}

// MLAInfo is a latent-attention model's cache row (Latent + Rope values)
// and what its heads would cache as plain multi-head attention: Heads ×
// (Key + Value) values.
type MLAInfo struct {
	Latent, Rope, Heads, Key, Value int
}

// KVShare is a layer that reads the cache of layer Source.
type KVShare struct{ Layer, Source int }

// PLEInfo describes a per-layer embedding table: for each of Tokens
// tokens a row of Layers × Width values of Type, RowBytes each; it stays
// in the mapped file on the host, one row read per position.
type PLEInfo struct {
	Width, Layers, Tokens int
	Type                  string
	RowBytes              int64
}

// Bytes is the table's size.
func (p PLEInfo) Bytes() int64 { return int64(p.Tokens) * p.RowBytes }

// Request asks for one reply.
type Request struct {
	// Messages is the whole conversation, oldest first, ending with the
	// user's turn. In completion mode the contents are joined as raw text and
	// the reply continues it.
	Messages  []chat.Message
	MaxTokens int // 0: until end of turn or a full context
	// Fork, when set, continues an earlier reply from one of its steps with
	// a token the caller chose (see ForkPoint).
	Fork *ForkPoint
	// DisableThinking passes enable_thinking=false to the chat template (the
	// user's /think off); Qwen3's template then pre-fills an empty block.
	DisableThinking bool
	// ReasoningEffort is the template's reasoning_effort (gpt-oss: low,
	// medium or high; see chat.ReasoningEfforts); empty leaves it unset.
	ReasoningEffort string
	// Stop ends the reply once its answer (reasoning left out) holds
	// one of these strings, as llama.cpp's "stop"; DoneInfo.Stop says
	// which. Empty strings are ignored.
	Stop []string
}
