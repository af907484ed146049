package engine

import (
	"fmt"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/plan"
)

// MaxContext is the largest context window vkchat opens: 16M positions,
// above the longest trained context of any model (10M), and small enough
// that every size derived from it (the cache's bytes, a position times a
// row's width, the backends' token history) stays far from overflowing.
// A larger window would only fail later, in an allocation or a wrapped
// size.
const MaxContext = 1 << 24

// CheckContextSize holds a requested context window to 0 (the model's own,
// at most DefaultContext) or 1 to MaxContext. Every way a size comes in
// (the --ctx flags, vkchat info's estimate, an export's header through
// Load) meets this check before any arithmetic or allocation uses it.
func CheckContextSize(n int) error {
	if n < 0 || n > MaxContext {
		return fmt.Errorf("context size %d is out of range: %s", n, ContextRange)
	}
	return nil
}

// ContextRange says which context sizes CheckContextSize takes.
var ContextRange = fmt.Sprintf("want 1 to %d positions, or 0 for the model's own (at most %d)", MaxContext, DefaultContext)

// contextWindow resolves Options.ContextSize: 0 is the model's trained
// context capped at DefaultContext (at least one position, whatever the
// file says); anything else must pass CheckContextSize.
func contextWindow(asked, trained int) (int, error) {
	if err := CheckContextSize(asked); err != nil {
		return 0, err
	}
	if asked == 0 {
		return max(1, min(trained, DefaultContext)), nil
	}
	return asked, nil
}

// checkContextFits refuses, before anything is allocated, a context the
// machine's memory cannot hold (--ctx 16000000, or an export asking for
// one), naming the largest that fits, instead of dying in the allocation.
// avail is the memory available (cpu.MemAvailable); where it is unknown
// nothing is checked.
func checkContextFits(m *arch.Model, ctx int, kv, kvV backend.KVType, avail int64) error {
	if avail <= 0 {
		return nil
	}
	p, err := plan.Resolve(m, ctx)
	if err != nil {
		return err
	}
	if cpu.ContextBytes(p, ctx, kv, kvV) <= avail {
		return nil
	}
	lo, hi := 0, ctx // the largest context whose cost fits, by bisection
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if cpu.ContextBytes(p, mid, kv, kvV) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return fmt.Errorf("a context of %d positions needs %s for its %s KV cache and attention buffers, and %s of memory is available: the largest context that fits is %d (--ctx %d)",
		ctx, gib(cpu.ContextBytes(p, ctx, kv, kvV)), backend.KVName(kv, kvV), gib(avail), lo, lo)
}

func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }

// memAvailable is cpu.MemAvailable; tests replace it.
var memAvailable = cpu.MemAvailable
