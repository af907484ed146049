package engine

import (
	"fmt"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
)

// checkContextFits refuses, before anything is allocated, a context the
// machine's memory cannot hold (--ctx 1000000000, or an export asking for
// one), naming the largest that fits, instead of dying in the allocation.
// avail is the memory available (cpu.MemAvailable); where it is unknown
// nothing is checked.
func checkContextFits(m *arch.Model, ctx int, kv backend.KVType, avail int64) error {
	if avail <= 0 || cpu.ContextBytes(m, ctx, kv) <= avail {
		return nil
	}
	lo, hi := 0, ctx // the largest context whose cost fits, by bisection
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if cpu.ContextBytes(m, mid, kv) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return fmt.Errorf("a context of %d positions needs %s for its %s KV cache and attention buffers, and %s of memory is available: the largest context that fits is %d (--ctx %d)",
		ctx, gib(cpu.ContextBytes(m, ctx, kv)), kv, gib(avail), lo, lo)
}

func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }

// memAvailable is cpu.MemAvailable; tests replace it.
var memAvailable = cpu.MemAvailable
