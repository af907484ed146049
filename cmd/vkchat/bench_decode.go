package main

import (
	"context"
	"fmt"

	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/simd"
	"vkchat/runtime/vk"
)

// bound is a decode result judged against its device: decode reads every
// weight (and the KV cache so far) once per token, so the device's read
// bandwidth divided by those bytes is the fastest it could go.
type bound struct {
	BytesPerToken   uint64  `json:"bytes_per_token,omitempty"`
	ReadBandwidth   float64 `json:"read_bandwidth_bytes_per_second,omitempty"`
	BoundTPS        float64 `json:"bound_tokens_per_second,omitempty"`
	FractionOfBound float64 `json:"fraction_of_bound,omitempty"`
}

// decodeStep returns one greedy decode step the way the chat takes it:
// through the backend's on-device head where it offers one (only the best
// candidates come back), else from the whole vocabulary's logits.
func decodeStep(b backend.Backend) (func(ctx context.Context, tok int32, pos int) (int32, error), string) {
	if hb, ok := b.(backend.HeadBackend); ok && hb.MaxHead() > 0 {
		k := hb.MaxHead()
		return func(ctx context.Context, tok int32, pos int) (int32, error) {
			h, ok, err := hb.ForwardHead(ctx, []int32{tok}, pos, k)
			if err != nil {
				return 0, err
			}
			if !ok || len(h.IDs) == 0 {
				// too many near-ties for the kernel: the chat reads the
				// vocabulary then, and so does the bench
				logits, err := hb.LastLogits(h.Seq)
				if err != nil {
					return 0, err
				}
				return argmax(logits), nil
			}
			return h.IDs[0], nil
		}, "device head"
	}
	return func(ctx context.Context, tok int32, pos int) (int32, error) {
		logits, err := b.Forward(ctx, []int32{tok}, pos, false)
		if err != nil {
			return 0, err
		}
		next := argmax(logits)
		if r, ok := b.(backend.Recycler); ok {
			r.Recycle(logits) // as the chat hands back each step's logits
		}
		return next, nil
	}, "logits"
}

// readBandwidth measures the device's read bandwidth with the minimal
// streaming kernel, through texel fetches (what the kernels use) and
// storage-buffer loads, timed by the device's timestamps on a buffer the
// runtime sizes for the device (runtime/vk's BandwidthBytes). The memory
// stays with the backend until it closes, so the bench measures once.
func readBandwidth(b *vk.Backend) (texel, ssbo float64, err error) {
	texel, ssbo, err = b.ReadBandwidth(0)
	if err != nil {
		return 0, 0, fmt.Errorf("read bandwidth: %w", err)
	}
	return texel, ssbo, nil
}

// decodeBound judges tps for a decode step at context position pos against
// the texel read bandwidth.
func decodeBound(b *vk.Backend, pos int, texel, tps float64) bound {
	r := bound{BytesPerToken: b.DecodeBytes(pos), ReadBandwidth: texel}
	if r.BytesPerToken > 0 && texel > 0 {
		r.BoundTPS = texel / float64(r.BytesPerToken)
		r.FractionOfBound = tps / r.BoundTPS
	}
	return r
}

// cpuDecodeBound judges tps for a CPU decode step at context position pos
// against the machine's streaming read bandwidth with the backend's thread
// count, measured the way the kernels read (simd.ReadBandwidth).
func cpuDecodeBound(b *cpu.Backend, pos, threads int, tps float64) bound {
	if threads <= 0 {
		threads = cpu.DefaultThreads()
	}
	r := bound{BytesPerToken: uint64(b.DecodeBytes(pos)), ReadBandwidth: simd.ReadBandwidth(threads, 5)}
	if r.BytesPerToken > 0 && r.ReadBandwidth > 0 {
		r.BoundTPS = r.ReadBandwidth / float64(r.BytesPerToken)
		r.FractionOfBound = tps / r.BoundTPS
	}
	return r
}
