package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"
	"vkchat/runtime/vk/vulkan"
)

// kvQuant is a block-quantized KV cache's part of the recording, as the
// CPU backend and llama.cpp's CPU flash attention do it: the rope kernel
// leaves a step's keys and values in f32 staging rows (rope.glsl, KVF32 2),
// kvquant.comp rotates (llama.cpp's Hadamard rotation) and quantizes them
// once into the cache, and attnq.comp reads the codes: the query converted
// to Q8_0 (Q8_1 for q4_1, q5_1) for an integer dot with the keys, the
// values dequantized and summed in f32 (shaders/kvquant.glsl has the
// cache's layout; iq4_nl's codes index its table). A pair of
// two types (one half quantized and the other f16 or f32, or f16 beside
// f32) takes the same path, the plain half stored and read as the CPU
// backend keeps it, as llama.cpp's flash attention runs every such pair;
// attention.comp reads one element type for both halves.
type kvQuant struct {
	kt, vt     uint32 // kvquant.glsl's type codes
	rotK, rotV int    // Hadamard orders (0: none): plan.CacheRotation
	ks, vs     *vulkan.Buffer
}

// kvTypeCode is kvquant.glsl's code of a cache type, 0 for one it has no
// kernels for.
func kvTypeCode(t backend.KVType) uint32 {
	switch t {
	case backend.KVQ8_0:
		return 1
	case backend.KVQ4_0:
		return 2
	case backend.KVQ5_0:
		return 3
	case backend.KVQ4_1:
		return 4
	case backend.KVQ5_1:
		return 5
	case backend.KVF16:
		return 6
	case backend.KVF32:
		return 7
	case backend.KVIQ4_NL:
		return 8
	}
	return 0
}

// kvSplit reports whether a cache of keys k and values v takes the
// quantized cache's path (kvQuant): a quantized half, or two types.
func kvSplit(k, v backend.KVType) bool { return k.Quantized() || v.Quantized() || k != v }

// cpuAttention reports whether an f16 cache takes attnq.comp's f16 path
// (the CPU backend's F16 flash attention: the query rounded to f16, its
// score order, an f16 value sum) instead of attention.comp: where the
// rest of the model gives the CPU's bits too (cpuOrder: every matrix is
// F32, weights.cpuOrder) and every head size is a multiple of 32, but an
// MLA slot's (mla.go writes its rows and reads them here with a tail past
// the last 32: kvquant.comp, which keeps blocks of 32, never sees them).
func cpuAttention(p *plan.Plan, cpuOrder bool, k, v backend.KVType) bool {
	if !cpuOrder || k != backend.KVF16 || v != backend.KVF16 {
		return false
	}
	for _, s := range p.Cache {
		if s.HeadDim%32 != 0 && (s.Latent == 0 || s.HeadDim%2 != 0) {
			return false
		}
	}
	return true
}

// checkKVTypes refuses the cache types this backend has no kernels for,
// naming them, after the plan's own check (a head size not a multiple of
// 32, MLA), which the CPU backend makes too. An f16 key beside an f32
// value (or the reverse) needs it too here: kvquant.comp and attnq.comp
// work in blocks of 32 values.
func checkKVTypes(p *plan.Plan, k, v backend.KVType) error {
	if err := p.CheckCacheTypes(k, v); err != nil {
		return fmt.Errorf("vulkan backend: %w", err)
	}
	if kvSplit(k, v) {
		for _, s := range p.Cache {
			if s.HeadDim%32 != 0 {
				return fmt.Errorf("vulkan backend: a %s KV cache is kept in blocks of 32 values inside a head, and layer %d's head size is %d: use one type, f16 or f32, for both", backend.KVName(k, v), s.Layer, s.HeadDim)
			}
		}
	}
	for _, t := range []backend.KVType{k, v} {
		if kvTypeCode(t) == 0 {
			return fmt.Errorf("vulkan backend: a %s KV cache: this backend has no kernels for %s (it keeps f32, f16, q8_0, q5_1, q5_0, q4_1, q4_0 and iq4_nl); use the cpu backend", backend.KVName(k, v), t)
		}
	}
	return nil
}

// newKVQuant is the quantized cache's setup for p (nil for keys and values
// in one f16 or f32 type, but for the f16 cache of a model whose path
// rounds as the CPU's, cpuAttention): its rotations (plan.CacheRotation, as the CPU backend's) and
// the staging rows for cap tokens of kvw values.
func newKVQuant(d *gpu, p *plan.Plan, cpuOrder bool, opts backend.Options, act *activations, cap, kvw int) (*kvQuant, error) {
	k, v := opts.KVType, opts.ValueType()
	if !kvSplit(k, v) && !cpuAttention(p, cpuOrder, k, v) {
		return nil, nil
	}
	q := &kvQuant{kt: kvTypeCode(k), vt: kvTypeCode(v)}
	q.rotK, q.rotV = p.CacheRotation(k, v)
	var err error
	if q.ks, err = act.buffer(d, "quantized KV cache: the step's keys in f32", cap*kvw, vulkan.MemDevice); err != nil {
		return nil, err
	}
	if q.vs, err = act.buffer(d, "quantized KV cache: the step's values in f32", cap*kvw, vulkan.MemDevice); err != nil {
		return nil, err
	}
	return q, nil
}

// kvQuantBytes is a quantized cache's buffer size for rows rows (KV heads ×
// slots) of hd values of type t: kvquant.glsl's code words and scale words
// (a plain half of a mixed pair: its values).
func kvQuantBytes(t backend.KVType, rows, hd int) uint64 {
	if !t.Quantized() {
		return uint64(rows) * uint64(t.RowBytes(hd))
	}
	nb := hd / 32
	cw, sw := hd/8, (nb+1)/2
	switch t {
	case backend.KVQ8_0:
		cw = hd / 4
	case backend.KVQ5_0:
		cw += nb
	case backend.KVQ4_1:
		sw = nb
	case backend.KVQ5_1:
		cw, sw = cw+nb, nb
	}
	return uint64(rows) * uint64(cw+sw) * 4
}

// hadamardScale is 1/√n rounded as ggml's 1.0f/sqrtf((float)n) and the
// CPU backend's hadamardScale; the shaders multiply by it before the
// butterflies, as ggml's CPU fwht does.
func hadamardScale(n int) float32 {
	if n == 0 {
		return 1
	}
	return 1 / float32(math.Sqrt(float64(n)))
}

// write records kvquant.comp for a layer's step: the staging rows of up to
// tokens tokens into kc and vc at the step's positions.
func (q *kvQuant) write(d *gpu, r *vulkan.Recorder, label string, hd, kvHeads, slots int, kc, vc, step *vulkan.Buffer, tokens int) error {
	k, err := d.kernel("kvquant", 3*4, uint32(hd), q.kt, q.vt, uint32(q.rotK), uint32(q.rotV))
	if err != nil {
		return fmt.Errorf("kvquant kernel: %w", err)
	}
	push := []uint32{uint32(slots), math.Float32bits(hadamardScale(q.rotK)), math.Float32bits(hadamardScale(q.rotV))}
	return r.Dispatch(label, k, []vulkan.Arg{vulkan.R(q.ks), vulkan.R(q.vs), {B: kc, Write: true, Format: fmtU32}, {B: vc, Write: true, Format: fmtU32}, vulkan.R(step)},
		push, uint32(tokens), uint32(kvHeads), 2)
}

// attnqShared is attnq.comp's shared memory in bytes.
func attnqShared(hd, g, lanes int) int {
	return 4 * (2*g*hd + 2*g*hd/32 + g*lanes)
}

// attend records attnq.comp for op (its cache quantized).
func (q *kvQuant) attend(d *gpu, r *vulkan.Recorder, op attnOp) error {
	g := op.heads / op.kvHeads
	lanes := 32
	if attnqShared(op.hd, g, lanes) > int(d.Info.Limits.MaxSharedMemory) {
		return fmt.Errorf("attention %s: %d query heads of %d per KV head over a quantized cache need %d bytes of shared memory, over the device's %d",
			op.label, g, op.hd, attnqShared(op.hd, g, lanes), d.Info.Limits.MaxSharedMemory)
	}
	dum, err := d.dummy()
	if err != nil {
		return err
	}
	sinks := op.sinks
	if sinks == nil {
		sinks = dum
	}
	k, err := d.kernel("attnq", 7*4, uint32(lanes), uint32(op.hd), uint32(g), q.kt, q.vt, uint32(q.rotK), uint32(q.rotV), op.capMode(), flag(op.sinks != nil), uint32(op.roff))
	if err != nil {
		return fmt.Errorf("attnq kernel: %w", err)
	}
	push := []uint32{uint32(op.qstride), uint32(op.slots), math.Float32bits(op.scale), math.Float32bits(op.cap), uint32(op.window),
		math.Float32bits(hadamardScale(q.rotK)), math.Float32bits(hadamardScale(q.rotV))}
	return r.Dispatch(op.label, k, []vulkan.Arg{vulkan.R(op.q), {B: op.kc, Format: fmtU32}, {B: op.vc, Format: fmtU32}, vulkan.W(op.out), vulkan.R(op.step), vulkan.R(sinks)},
		push, uint32(op.kvHeads), uint32(op.tokens), 1)
}
