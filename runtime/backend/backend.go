// Package backend is the contract between the engine and the compute
// backends (the CPU backend in runtime/cpu, Vulkan in runtime/vk).
// It is deliberately small: a backend runs the forward pass of one model over
// its own KV cache and reports its memory; everything else (sampling,
// tokenization, events) lives in the engine.
package backend

import (
	"context"
	"errors"
	"fmt"
)

// Options configure a backend instance for one model.
type Options struct {
	ContextSize int    // KV-cache positions to allocate
	Threads     int    // CPU worker goroutines (0: one per physical core, cpu.DefaultThreads)
	KVType      KVType // element type of the KV cache's keys (and values, unless KVTypeV)
	KVTypeV     KVType // element type of its values; "" = KVType
	Device      int    // Vulkan physical device index; -1 picks the best
	// DeviceHead says whether a backend that can reduce the logits to
	// their head on its device (HeadBackend) does so.
	DeviceHead HeadMode
}

// HeadMode is Options.DeviceHead.
type HeadMode string

const (
	HeadAuto HeadMode = ""    // on GPUs; off where the device is the CPU and the logits are already in host memory
	HeadOn   HeadMode = "on"  // always (tests on lavapipe)
	HeadOff  HeadMode = "off" // never
)

// KVType is the element type the KV cache is stored in.
type KVType string

const (
	KVF16 KVType = "f16" // llama.cpp's default
	KVF32 KVType = "f32"
	// Block-quantized caches, as llama.cpp's -ctk/-ctv: 32 values a
	// block with an F16 scale (q8_0: 8-bit codes, 34 B; q4_0: 4-bit,
	// 18 B; q5_0: 5-bit, 22 B), and with an F16 minimum too (q4_1: 20 B;
	// q5_1: 24 B).
	KVQ8_0 KVType = "q8_0"
	KVQ4_0 KVType = "q4_0"
	KVQ4_1 KVType = "q4_1"
	KVQ5_0 KVType = "q5_0"
	KVQ5_1 KVType = "q5_1"
	// IQ4_NL: 4-bit indices into a fixed non-linear table, an F16 scale a
	// block (18 B); the CPU backend only.
	KVIQ4_NL KVType = "iq4_nl"
)

// KVTypes are the cache types a backend may be asked for.
var KVTypes = []KVType{KVF16, KVF32, KVQ8_0, KVQ4_0, KVQ4_1, KVQ5_0, KVQ5_1, KVIQ4_NL}

// Bytes is the size of one KV element of F16 or F32 (2 for the others,
// whose size is per block: RowBytes).
func (k KVType) Bytes() int {
	if k == KVF32 {
		return 4
	}
	return 2
}

// Quantized reports whether values are stored in blocks of 32.
func (k KVType) Quantized() bool { return k.BlockBytes() > 0 }

// BlockBytes is a quantized type's bytes per block of 32 values (0 for
// F16 and F32).
func (k KVType) BlockBytes() int {
	switch k {
	case KVQ8_0:
		return 34
	case KVQ4_0:
		return 18
	case KVQ4_1:
		return 20
	case KVQ5_0:
		return 22
	case KVQ5_1:
		return 24
	case KVIQ4_NL:
		return 18
	}
	return 0
}

// RowBytes is the bytes of n values (a whole number of blocks for a
// quantized type).
func (k KVType) RowBytes(n int) int64 {
	if b := k.BlockBytes(); b > 0 {
		return int64(n/32) * int64(b)
	}
	return int64(n) * int64(k.Bytes())
}

// PerValue says what one value costs, for formulas: "2 B", "34/32 B".
func (k KVType) PerValue() string {
	if b := k.BlockBytes(); b > 0 {
		return fmt.Sprintf("%d/32 B", b)
	}
	return fmt.Sprintf("%d B", k.Bytes())
}

// KVName names a cache of keys of type k and values of type v: "q8_0",
// or "q8_0/f16" where they differ (as ModelInfo and exports record it).
func KVName(k, v KVType) string {
	if k == v {
		return string(k)
	}
	return string(k) + "/" + string(v)
}

// Known reports whether k is one of KVTypes.
func (k KVType) Known() bool {
	for _, t := range KVTypes {
		if k == t {
			return true
		}
	}
	return false
}

// ValueType is the values' type of options o: KVTypeV, or KVType.
func (o Options) ValueType() KVType {
	if o.KVTypeV != "" {
		return o.KVTypeV
	}
	return o.KVType
}

// Memory is a backend's exact memory accounting in bytes.
type Memory struct {
	Weights     int64 // model weights as held by the backend
	KVAllocated int64 // the whole KV cache (ContextSize positions)
	KVPerToken  int64 // bytes one position takes: layers × 2 × kv_heads × head_dim × element size
	Scratch     int64 // activations and other working buffers
	Device      string
	// KVRings lists the sliding-window layers whose cache holds only their
	// window (a ring); nil when every layer holds the whole context.
	KVRings []KVRing
	// KVGroups is the cache as this backend lays it out: layers whose
	// caches hold the same positions at the same width, full ones first
	// (a ring's Positions are what the backend keeps, its window and
	// more); KVShared counts the layers that read another's cache and
	// hold none. SetCacheLayout fills them with KVRings.
	KVGroups []KVGroup
	KVShared int
	// KVFormula says in one line how KVAllocated adds up, for the memory
	// panel ("" when the backend does not say).
	KVFormula string

	// Hybrid models (recurrent layers beside attention ones; see
	// StateBackend). KVAllocated and KVPerToken count attention layers only.
	// StateBytes is the recurrent state of every recurrent layer: a fixed
	// size, whatever the context length; 0 for attention-only models.
	StateBytes int64
	// StateFormula says in one line how StateBytes adds up.
	StateFormula string
	// CheckpointBytes is what the saved states (StateBackend.Checkpoint)
	// take now.
	CheckpointBytes int64
}

// KVRing is a group of sliding-window layers whose caches hold Window
// positions; BytesPerPosition is what one position costs across them.
type KVRing struct {
	Layers, Window   int
	BytesPerPosition int64
}

// KVGroup is a set of layers whose caches hold Positions positions of
// KVHeads × HeadDim values each for K and for V; Window > 0 for a
// sliding-window group (whose Positions may exceed it).
type KVGroup struct {
	Layers, Positions, Window, KVHeads, HeadDim int
}

// SetCacheLayout records a backend's cache groups and shared layers, and
// the rings among the groups with keys of type k and values of type v.
func (m *Memory) SetCacheLayout(groups []KVGroup, shared int, k, v KVType) {
	m.KVGroups, m.KVShared, m.KVRings = groups, shared, nil
	for _, g := range groups {
		if g.Window > 0 {
			perLayer := k.RowBytes(g.KVHeads*g.HeadDim) + v.RowBytes(g.KVHeads*g.HeadDim)
			m.KVRings = append(m.KVRings, KVRing{Layers: g.Layers, Window: g.Positions, BytesPerPosition: int64(g.Layers) * perLayer})
		}
	}
}

// KVUsedAt is the KV-cache bytes holding data after positions tokens: every
// position costs KVPerToken, less what ring layers no longer keep.
func (m Memory) KVUsedAt(positions int) int64 {
	n := int64(positions) * m.KVPerToken
	for _, r := range m.KVRings {
		if positions > r.Window {
			n -= int64(positions-r.Window) * r.BytesPerPosition
		}
	}
	return n
}

// Backend runs the forward pass.
type Backend interface {
	// Name is "cpu" or "vulkan".
	Name() string
	// Forward processes tokens at positions pos, pos+1, ... , writing their
	// keys and values into the cache (positions >= pos are overwritten, so
	// rewinding is just calling Forward with a smaller pos). It returns the
	// logits of the last token, or of every token (len(tokens) × vocab,
	// token-major) when all is true.
	Forward(ctx context.Context, tokens []int32, pos int, all bool) ([]float32, error)
	Memory() Memory
	Close() error
}

// StateBackend is implemented by backends running a model with recurrent
// layers (qwen35's Gated DeltaNet, lfm2's short convolutions). Such a layer
// folds every position into a fixed-size state, so unlike a KV cache it
// cannot be cut back to an earlier position: going back means restoring a
// saved state and feeding the tokens after it again. The backend keeps
// the checkpoints (a bounded number, as llama-server keeps context
// checkpoints per slot); the engine says when to take one and where to go
// back to.
//
// On such a backend Forward must be called at the position its state is at
// (the end of the last Forward, or what Rewind returned); any other pos is
// an error, never a silently wrong state.
type StateBackend interface {
	// Checkpoint saves the state after the positions processed so far. When
	// the backend already holds its limit, the oldest checkpoint goes.
	Checkpoint()
	// Rewind restores the latest checkpoint at a position <= pos (0: the
	// empty state, always available) and returns that position; the caller
	// feeds tokens [returned, pos) again. Checkpoints after pos are dropped:
	// the tokens after pos may change.
	Rewind(pos int) int
	// Checkpoints lists the saved positions, oldest first.
	Checkpoints() []int
}

// CheckpointDropper is a StateBackend that can drop one saved state: the
// engine's speculative decoding saves one before each verification, for
// a rollback, and drops it once the round has settled, so the bounded
// list keeps the checkpoints a later request branches from (the prompt's
// end) rather than one per round.
type CheckpointDropper interface {
	// DropCheckpoint drops the checkpoint saved at pos, if there is one.
	DropCheckpoint(pos int)
}

// Routing is where a mixture-of-experts layer sent one token: the experts
// it chose, most weight first, and their weights.
type Routing struct {
	Experts []int32
	Weights []float32
}

// RoutingBackend is implemented by backends that run mixture-of-experts
// models: LastRouting is, per layer, the routing of the last token the
// last Forward processed (a zero Routing for a dense layer). The slices
// are the backend's and change with the next Forward.
type RoutingBackend interface {
	LastRouting() []Routing
}

// ErrContextFull is returned when pos+len(tokens) exceeds the context size.
var ErrContextFull = errors.New("context window is full")

// ErrUnsupported wraps a backend's refusal of a model whose recipe it does
// not run (yet); another backend may.
var ErrUnsupported = errors.New("not supported by this backend")

// ErrDeviceLost wraps failures after which the backend cannot continue; the
// engine offers the CPU backend in their place.
var ErrDeviceLost = errors.New("compute device lost")

// HiddenBackend is the extension point for a drafter that continues the
// target's own computation (a Qwen3.5/3.6 MTP head, whose input at a
// position is the target's final hidden state there beside the next
// token's embedding): a backend that keeps the final hidden state of the
// rows it reads (the residual stream after the last layer and the output
// norm: what llama.cpp hands its MTP head, see MTPBackend; kept while
// MTPBackend.KeepHidden is on) hands them over here. LastHidden returns
// the rows read since its previous call, the latest last, row-major,
// rows × the model's embedding width (all of a prefill read in chunks;
// after a rewind, those from the rewind on), in the backend's memory
// until its next Forward (0, nil when it kept none). The engine passes
// them to its Drafter (engine.Drafter's Observe); a backend that does not
// implement it gives the drafter nil.
type HiddenBackend interface {
	LastHidden() (rows int, hidden []float32)
}
