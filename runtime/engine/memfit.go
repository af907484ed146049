package engine

import (
	"fmt"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
)

// contextBytes is what a context of ctx positions costs the CPU backend
// beyond the mapped weights: the KV cache, the per-KV-head attention
// buffers that widen a window of it, and the token history.
func contextBytes(m *arch.Model, ctx int, kv backend.KVType) int64 {
	c := int64(ctx)
	attn := int64(m.KVHeads) * (2*c + 1) * int64(m.HeadDim) * 4
	return m.KVBytes(ctx, kv.Bytes()) + attn + 4*c
}

// checkContextFits refuses, before anything is allocated, a context the
// machine's memory cannot hold (--ctx 1000000000, or an export asking for
// one), naming the largest that fits, instead of dying in the allocation.
// avail is the memory available (cpu.MemAvailable); where it is unknown
// nothing is checked.
func checkContextFits(m *arch.Model, ctx int, kv backend.KVType, avail int64) error {
	if avail <= 0 || contextBytes(m, ctx, kv) <= avail {
		return nil
	}
	lo, hi := 0, ctx // the largest context whose cost fits, by bisection
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if contextBytes(m, mid, kv) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return fmt.Errorf("a context of %d positions needs %s for its %s KV cache and attention buffers, and %s of memory is available: the largest context that fits is %d (--ctx %d)",
		ctx, gib(contextBytes(m, ctx, kv)), kv, gib(avail), lo, lo)
}

func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }

// memAvailable is cpu.MemAvailable; tests replace it.
var memAvailable = cpu.MemAvailable
