package vk

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"vkchat/runtime/vk/vulkan"
)

// Profile is where one decode step and one prefill chunk spend device time.
type Profile struct {
	Decode  []vulkan.KernelTime
	Prefill []vulkan.KernelTime
	// PrefillHead is the output head after the last chunk, for its last
	// token only.
	PrefillHead []vulkan.KernelTime
	// PrefillTokens is the chunk the prefill timings are for.
	PrefillTokens int
}

// profiler is whether the backend times its dispatches (NewProfiled):
// then each recorder gets a timestamp after every dispatch.
type profiler struct {
	on bool
}

// queries sizes the timestamp pool of a recorder of a step through layers
// layers: none unless profiling. A layer takes 6 dispatches, more where
// matrices are split into parts or K into chunks (a 1B model's prefill on
// lavapipe: 13 per layer). Timestamps are cheap; an undersized pool makes
// Timings fail rather than under-report.
func (p profiler) queries(layers int) int {
	if !p.on {
		return 0
	}
	return 16 + 64*layers
}

// Profile runs a decode step at position pos and a prefill of n tokens
// (both with the backend's recorded command buffers, timestamps after every
// dispatch) and returns the per-dispatch times. The backend must have been
// made with NewProfiled; the KV cache positions it touches are overwritten.
func (b *Backend) Profile(ctx context.Context, pos, n int) (_ *Profile, err error) {
	defer func() { err = deviceError(err) }()
	if !b.prof.on {
		return nil, fmt.Errorf("vulkan backend: made without profiling (use NewProfiled)")
	}
	n = min(n, prefillChunk, b.opts.ContextSize-pos)
	p := &Profile{PrefillTokens: n}
	// Each step runs twice: drivers may compile pipelines at their first
	// dispatch (llvmpipe does), which the timestamps would include.
	for i := 0; i < 2; i++ {
		if _, err := b.Forward(ctx, []int32{1}, pos, false); err != nil {
			return nil, err
		}
	}
	if p.Decode, err = b.graph.decode.Timings(); err != nil {
		return nil, err
	}
	b.attentionWork(p.Decode, pos, 1)
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(1 + i%(b.plan.Vocab-1))
	}
	if n > 1 {
		for i := 0; i < 2; i++ {
			if _, err := b.Forward(ctx, toks, pos, false); err != nil {
				return nil, err
			}
		}
		if p.Prefill, err = b.graph.prefill.Timings(); err != nil {
			return nil, err
		}
		b.attentionWork(p.Prefill, pos, n)
		if p.PrefillHead, err = b.graph.headLast.Timings(); err != nil { // recorded by the Forward above
			return nil, err
		}
	}
	return p, nil
}

// attentionWork fills in the bytes and multiply-adds of the attention
// dispatches among ts for n tokens from position pos: unlike a mat-vec's,
// they depend on the step (the live span), so the recording cannot declare
// them. Bytes are the keys and values each token's workgroups read (a
// prefill's tokens share most of them through the caches; counted once per
// token, as the kernel issues them), MACs per token the scores' and the
// values' (2 × heads × live × head size), as the profile's mat-vecs count
// them. A key or value row costs its type's row bytes, so a quantized or
// mixed cache counts its blocks, not two bytes a value.
func (b *Backend) attentionWork(ts []vulkan.KernelTime, pos, n int) {
	for i := range ts {
		// The attention kernels' dispatches only (the f16/f32 one and the
		// quantized-cache one; not a gate after them, nor the mat-vecs,
		// whose work the recording declared), by the shader's name; the
		// layer from the label's "L<n> " prefix.
		var l int
		if !isAttentionKernel(ts[i].Kernel) {
			continue
		}
		if k, _ := fmt.Sscanf(ts[i].Label, "L%d ", &l); k != 1 || l < 0 || l >= len(b.plans) {
			continue
		}
		pl := b.plans[l]
		var live uint64
		for t := 0; t < n; t++ {
			span := pos + t + 1
			if pl.window > 0 {
				span = min(span, pl.window)
			}
			live += uint64(span)
		}
		hd := uint64(pl.headDim)
		row := uint64(b.opts.KVType.RowBytes(pl.headDim) + b.opts.ValueType().RowBytes(pl.headDim))
		ts[i].Bytes = uint64(pl.kvHeads) * row * live
		ts[i].MACs = 2 * uint64(b.plan.Heads) * hd * live / uint64(n)
	}
}

// isAttentionKernel reports whether a dispatch of the named shader is an
// attention pass whose work attentionWork fills in.
func isAttentionKernel(name string) bool { return name == "attention" || name == "attnq" }

// ReadBandwidth measures how fast a minimal kernel streams size bytes on
// the backend's device through storage-buffer loads and through texel
// fetches (the path the kernels use), in bytes per second: the bound the
// mat-vec kernels are judged against. size 0 picks BandwidthBytes.
func (b *Backend) ReadBandwidth(size uint64) (texel, ssbo float64, err error) {
	return b.d.ReadBandwidth(size)
}

// BandwidthBytes is the buffer the read-bandwidth kernel streams: large
// against the device's caches (an H200 has 50 MB of L2; 1/16 of the
// largest device-local heap, 64 MiB to 1 GiB) and within what one binding
// and one allocation may span and half of what the heap has left.
func (d *gpu) BandwidthBytes() uint64 { return bandwidthBytes(d.Info, d.HeapsUsed()) }

// bandwidthBytes is BandwidthBytes for a device described by info with
// used bytes already allocated from each heap.
func bandwidthBytes(info vulkan.DeviceInfo, used []uint64) uint64 {
	var heap, heapUsed uint64
	for h, hp := range info.Heaps {
		if hp.DeviceLocal && hp.Size > heap {
			heap = hp.Size
			heapUsed = 0
			if h < len(used) {
				heapUsed = used[h]
			}
		}
	}
	size := min(max(heap/16, 64<<20), 1<<30)
	if heap > heapUsed {
		size = min(size, (heap-heapUsed)/2)
	}
	lim := info.Limits
	size = min(size, lim.MaxStorageBufferRange, lim.MaxTexelElements*16)
	if m := info.Features.MaxAllocationSize; m > 0 {
		size = min(size, m)
	}
	const unit = 16 * bandwidthPerGroup
	return max(size/unit, 1) * unit
}

const (
	bandwidthWorkgroup = 64   // invocations
	bandwidthPerGroup  = 4096 // uvec4 per workgroup
)

// ReadBandwidth is Backend.ReadBandwidth for a bare device. Each kernel
// runs once to warm up and three times timed by the device's timestamps
// around the dispatch alone, so the submission and the fence wait (tens
// of microseconds, a large share of a fast device's pass over the buffer)
// do not count; the best run is the result. A queue without timestamps
// falls back to the wall clock around submission and wait, an
// underestimate.
func (d *gpu) ReadBandwidth(size uint64) (texel, ssbo float64, err error) {
	const wg, per = bandwidthWorkgroup, bandwidthPerGroup
	if size == 0 {
		size = d.BandwidthBytes()
	}
	size = max(size/(16*per), 1) * 16 * per
	src, err := d.NewBuffer("bandwidth source", size, vulkan.MemDevice)
	if err != nil {
		return 0, 0, err
	}
	if m := src.Mapped(); m != nil {
		for i := 0; i+4 <= len(m); i += 4 {
			binary.LittleEndian.PutUint32(m[i:], uint32(i)*2654435761)
		}
	}
	groups := uint32(size / (16 * per))
	dst, err := d.NewBuffer("bandwidth sink", uint64(groups)*wg*16, vulkan.MemDevice)
	if err != nil {
		return 0, 0, err
	}
	measure := func(name string) (float64, error) {
		k, err := d.kernel(name, 0, wg, per)
		if err != nil {
			return 0, err
		}
		r, err := d.NewRecorder(1)
		if err != nil {
			return 0, err
		}
		if err := r.Begin(); err != nil {
			return 0, err
		}
		x, y := groups, uint32(1)
		for x > d.Info.Limits.MaxWorkGroupCount[0] {
			x, y = (x+1)/2, y*2
		}
		if x*y != groups {
			return 0, fmt.Errorf("bandwidth: %d workgroups do not split into a grid", groups)
		}
		if err := r.Dispatch(name, k, []vulkan.Arg{vulkan.R(src), vulkan.R(src), vulkan.W(dst)}, nil, x, y, 1); err != nil {
			return 0, err
		}
		if err := r.End(); err != nil {
			return 0, err
		}
		best := time.Duration(1 << 62)
		for i := 0; i < 4; i++ { // the first run compiles
			t0 := time.Now()
			if err := r.Run(); err != nil {
				return 0, err
			}
			wall := time.Since(t0)
			if i == 0 {
				continue
			}
			ts, err := r.Timings()
			if err != nil {
				return 0, err
			}
			if len(ts) == 1 && ts[0].Time > 0 {
				best = min(best, ts[0].Time)
			} else {
				best = min(best, wall)
			}
		}
		return float64(size) / best.Seconds(), nil
	}
	if texel, err = measure("readbw_texel"); err != nil {
		return 0, 0, err
	}
	if ssbo, err = measure("readbw_ssbo"); err != nil {
		return 0, 0, err
	}
	return texel, ssbo, nil
}
