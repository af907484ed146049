package vk

import (
	"context"
	"fmt"
	"math"

	"vkchat/runtime/backend"
)

// maxHead is the most candidates the head kernel returns (its KMAX).
const maxHead = 64

// headWords is the head kernel's output: count, overflow, max, Z, Σx·e^x,
// padding, then maxHead ids and maxHead logits.
const headWords = 8 + 2*maxHead

// headWorkgroup is the head kernel's one workgroup.
const headWorkgroup = 256

// MaxHead implements backend.HeadBackend; 0 when the head is off or the
// device cannot view the vocabulary's logits as one texel buffer.
func (b *Backend) MaxHead() int {
	switch {
	case uint64(b.cfg.Vocab) > b.d.Info.Limits.MaxTexelElements:
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
func (b *Backend) ForwardHead(ctx context.Context, tokens []int32, pos int, k int) (backend.Head, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k <= 0 || k > b.MaxHead() {
		return backend.Head{}, false, fmt.Errorf("vulkan backend: head of %d candidates (1..%d)", k, b.MaxHead())
	}
	if b.nextHead == nil {
		r, err := b.recordWith(func(r *Recorder) error { return b.recordNextHead(r) })
		if err != nil {
			return backend.Head{}, false, fmt.Errorf("vulkan backend: recording the head kernel: %w", err)
		}
		b.nextHead = r
	}
	if _, err := b.forward(ctx, tokens, pos, false, b.nextHead); err != nil {
		return backend.Head{}, false, err
	}
	m := b.headOut.Mapped()
	if getU32(m, 4) != 0 {
		return backend.Head{Seq: b.seq}, false, nil // too many near-ties for the kernel's buffer
	}
	n := min(int(getU32(m, 0)), k)
	h := backend.Head{IDs: make([]int32, n), Logits: make([]float32, n), Max: getF32(m, 8), Seq: b.seq}
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
// in the host-visible buffer, unless a later step has overwritten them.
func (b *Backend) LastLogits(seq uint64) ([]float32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if seq != b.seq {
		return nil, fmt.Errorf("vulkan backend: the logits of step %d were overwritten by step %d", seq, b.seq)
	}
	out := make([]float32, b.cfg.Vocab)
	lg := b.logits.Mapped()
	for i := range out {
		out[i] = getF32(lg, 4*i)
	}
	return out, nil
}

func (b *Backend) recordNextHead(r *Recorder) error {
	k, err := b.d.Kernel("topk", 2*4, headWorkgroup, maxHead)
	if err != nil {
		return err
	}
	return r.Dispatch("next-token head", k, []Arg{{B: b.logits, Format: fmtU32}, W(b.headOut)},
		[]uint32{uint32(b.cfg.Vocab), maxHead}, 1, 1, 1)
}
