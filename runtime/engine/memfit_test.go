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

// TestContextFitFollowsKVType: the largest context that fits (the refusal's
// --ctx figure) is worked out in the cache's type, with the attention
// buffers the backend makes for it: a q8_0 cache fits at least the
// context its bytes per value (34/32 against 2) promise over f16's, q4_0
// at least its 18/32 — the memory the type saves becomes context — and
// each named context fits while one more does not.
func TestContextFitFollowsKVType(t *testing.T) {
	defer func(f func() int64) { memAvailable = f }(memAvailable)
	const avail = 48 << 20
	memAvailable = func() int64 { return avail }
	model := testenv.Model(t, "synth-qwen3-F32.gguf")
	fits := map[backend.KVType]int{}
	for _, kv := range []backend.KVType{backend.KVF16, backend.KVQ8_0, backend.KVQ4_0} {
		_, err := Load(context.Background(), model, Options{Backend: "cpu", ContextSize: MaxContext, KVType: kv, Template: "none"})
		if err == nil || !strings.Contains(err.Error(), "largest context that fits is") {
			t.Fatalf("%s: load with ctx %d: %v", kv, MaxContext, err)
		}
		var n int
		if _, err := fmt.Sscanf(err.Error()[strings.LastIndex(err.Error(), "--ctx "):], "--ctx %d)", &n); err != nil {
			t.Fatalf("no figure in %q: %v", err, err)
		}
		fits[kv] = n
		s, err := Load(context.Background(), model, Options{Backend: "cpu", ContextSize: 64, Template: "none"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Resolve(s.model, n)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if c := cpu.ContextBytes(p, n, kv, kv); c > avail || cpu.ContextBytes(p, n+1, kv, kv) <= avail {
			t.Errorf("%s: named %d positions (%d bytes); the next one must not fit in %d", kv, n, c, avail)
		}
	}
	t.Logf("in %d MiB: f16 %d positions, q8_0 %d, q4_0 %d", avail>>20, fits[backend.KVF16], fits[backend.KVQ8_0], fits[backend.KVQ4_0])
	for kv, per := range map[backend.KVType]float64{backend.KVQ8_0: 34.0 / 32, backend.KVQ4_0: 18.0 / 32} {
		if want := float64(fits[backend.KVF16]) * 2 / per; float64(fits[kv]) < want {
			t.Errorf("a %s cache fits %d positions where f16 fits %d: want at least %.0f (its bytes per value, %.4g against 2)", kv, fits[kv], fits[backend.KVF16], want, per)
		}
	}
}
