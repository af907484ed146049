package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/plan"
)

// A context the memory cannot hold is refused before anything is
// allocated, at once, naming the file and the largest context that fits
// (which does fit, and one more does not); a context that fits loads.
func TestContextTooLargeForMemory(t *testing.T) {
	defer func(f func() int64) { memAvailable = f }(memAvailable)
	const avail = 64 << 20
	memAvailable = func() int64 { return avail }
	model := testenv.Model(t, "stories260K.gguf")
	start := time.Now()
	// The largest context vkchat opens at all (1e9 is refused before any
	// arithmetic: TestContextSizeOutOfRange).
	_, err := Load(context.Background(), model, Options{Backend: "cpu", ContextSize: MaxContext})
	if err == nil || !strings.Contains(err.Error(), model) || !strings.Contains(err.Error(), "largest context that fits is") {
		t.Fatalf("load with ctx %d: %v", MaxContext, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the refusal took %v", d) // a hang guard, not a speed check
	}
	var fits int
	if _, err := fmt.Sscanf(err.Error()[strings.LastIndex(err.Error(), "--ctx "):], "--ctx %d)", &fits); err != nil {
		t.Fatalf("no figure in %q: %v", err, err)
	}
	s, err := Load(context.Background(), model, Options{Backend: "cpu", ContextSize: 512})
	if err != nil {
		t.Fatalf("a context that fits: %v", err)
	}
	defer s.Close()
	p, err := plan.Resolve(s.model, fits)
	if err != nil {
		t.Fatal(err)
	}
	if c := cpu.ContextBytes(p, fits, backend.KVF16, backend.KVF16); c > avail || cpu.ContextBytes(p, fits+1, backend.KVF16, backend.KVF16) <= avail {
		t.Errorf("named %d positions (%d bytes); the next one must not fit in %d", fits, c, avail)
	}
}

// A context size out of range is refused by Load with an error naming the
// range, on every backend, before any size is worked out from it: 2^62
// panicked in an allocation, from 2^55 the estimate wrapped, and -1 was
// taken silently as "the model's own".
func TestContextSizeOutOfRange(t *testing.T) {
	model := testenv.Model(t, "stories260K.gguf")
	for _, n := range []int{-1, math.MinInt, MaxContext + 1, 1_000_000_000, 1 << 55, 1 << 62, math.MaxInt} {
		for _, be := range []string{"cpu", "auto"} {
			s, err := Load(context.Background(), model, Options{Backend: be, ContextSize: n})
			if err == nil {
				s.Close()
				t.Errorf("%s, ctx %d: loaded", be, n)
				continue
			}
			want := fmt.Sprintf("context size %d is out of range: want 1 to %d positions, or 0 for the model's own (at most %d)", n, MaxContext, DefaultContext)
			if err.Error() != want {
				t.Errorf("%s, ctx %d: %v\nwant %s", be, n, err, want)
			}
		}
	}
	for _, n := range []int{0, 1, MaxContext} {
		if err := CheckContextSize(n); err != nil {
			t.Errorf("CheckContextSize(%d): %v", n, err)
		}
	}
}
