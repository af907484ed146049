package vk

import (
	"context"
	"fmt"
	"math"

	"vkchat/runtime/backend"

	"vkchat/runtime/vk/vulkan"
)

// maxHead is the most candidates the head kernel returns (its KMAX).
const maxHead = 64

// headWords is the head kernel's output: count, overflow, max, Z, Σx·e^x,
// padding, then maxHead ids and maxHead logits.
const headWords = 8 + 2*maxHead

// headWorkgroup is the head kernels' workgroup size.
const headWorkgroup = 256

// The head's first pass gives each workgroup a slice of about headSlice
// logits (fewer than one workgroup per SM on a GPU would leave the pass
// latency-bound: one workgroup over a 128K vocabulary reads it with one
// SM); the merge ranks the groups' k best together, which its candidate
// buffer (1024 in topk.comp) bounds to maxHeadGroups.
const (
	headSlice     = 4096
	maxHeadGroups = 1024 / maxHead
)

// headPlan is the first pass's workgroups and logits per workgroup for a
// vocabulary of n.
func headPlan(n int) (groups, per int) {
	groups = min(max((n+headSlice-1)/headSlice, 1), maxHeadGroups)
	per = int(alignUp(uint64((n+groups-1)/groups), headWorkgroup))
	return (n + per - 1) / per, per
}

// MaxHead implements backend.HeadBackend; 0 when the head is off or the
// device cannot view the vocabulary's logits as one texel buffer.
func (b *Backend) MaxHead() int {
	switch {
	case uint64(b.plan.Vocab) > b.d.Info.Limits.MaxTexelElements:
		return 0
	case b.opts.DeviceHead == backend.HeadOn:
		return maxHead
	case b.opts.DeviceHead == backend.HeadOff, !b.d.tune.deviceHead:
		return 0
	}
	return maxHead
}

// ForwardHead implements backend.HeadBackend: the decode step plus the head
// kernel in one submission, reading back 2·k words instead of the
// vocabulary.
func (b *Backend) ForwardHead(ctx context.Context, tokens []int32, pos int, k int) (_ backend.Head, _ bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer func() { err = deviceError(err) }()
	if k <= 0 || k > b.MaxHead() {
		return backend.Head{}, false, fmt.Errorf("vulkan backend: head of %d candidates (1..%d)", k, b.MaxHead())
	}
	if b.graph.nextHead == nil {
		r, err := b.recordWith(func(r *vulkan.Recorder) error { return b.recordNextHead(r) })
		if err != nil {
			return backend.Head{}, false, fmt.Errorf("vulkan backend: recording the head kernel: %w", err)
		}
		b.graph.nextHead = r
	}
	if _, err := b.forward(ctx, tokens, pos, false, b.graph.nextHead); err != nil {
		return backend.Head{}, false, err
	}
	m := b.act.headOut.Mapped()
	if getU32(m, 4) != 0 {
		return backend.Head{Seq: b.graph.seq}, false, nil // too many near-ties for the kernel's buffer
	}
	n := min(int(getU32(m, 0)), k)
	h := backend.Head{IDs: make([]int32, n), Logits: make([]float32, n), Max: getF32(m, 8), Seq: b.graph.seq}
	z, xw := float64(getF32(m, 12)), float64(getF32(m, 16))
	h.Z = z
	if z > 0 {
		h.Entropy = max(math.Log(z)-xw/z, 0)
	}
	for i := 0; i < n; i++ {
		h.IDs[i] = int32(getU32(m, 32+4*i))
		h.Logits[i] = getF32(m, 32+4*maxHead+4*i)
	}
	return h, true, nil
}

// LastLogits implements backend.HeadBackend: the logits the step seq left
// on the device, unless a later step has overwritten them.
func (b *Backend) LastLogits(seq uint64) (_ []float32, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer func() { err = deviceError(err) }()
	if seq != b.graph.seq {
		return nil, fmt.Errorf("vulkan backend: the logits of step %d were overwritten by step %d", seq, b.graph.seq)
	}
	out := make([]float32, b.plan.Vocab)
	lg, err := b.act.readLogits(1, b.plan.Vocab)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = getF32(lg, 4*i)
	}
	return out, nil
}

func (b *Backend) recordNextHead(r *vulkan.Recorder) error {
	return b.d.recordHead(r, b.act.logits, b.act.headParts, b.act.headOut, b.plan.Vocab)
}

// recordHead records the head over the first n logits of logits (f32) into
// out (headWords words): one dispatch for a vocabulary of one slice, else
// the per-slice pass into parts (maxHeadGroups records) and the merge.
func (d *gpu) recordHead(r *vulkan.Recorder, logits, parts, out *vulkan.Buffer, n int) error {
	groups, per := headPlan(n)
	k, err := d.kernel("topk", 3*4, headWorkgroup, maxHead)
	if err != nil {
		return err
	}
	first := out
	if groups > 1 {
		first = parts
	}
	err = r.Dispatch("next-token head", k, []vulkan.Arg{{B: logits, Format: fmtU32}, vulkan.W(first)}, []uint32{uint32(n), maxHead, uint32(per)}, uint32(groups), 1, 1)
	if err != nil || groups == 1 {
		return err
	}
	merge, err := d.kernel("topk_merge", 3*4, headWorkgroup, maxHead)
	if err != nil {
		return err
	}
	return r.Dispatch("next-token head merge", merge, []vulkan.Arg{vulkan.R(parts), vulkan.W(out)}, []uint32{uint32(groups), maxHead, 0}, 1, 1, 1)
}
