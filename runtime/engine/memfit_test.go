package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
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
	_, err := Load(context.Background(), model, Options{Backend: "cpu", ContextSize: 1_000_000_000})
	if err == nil || !strings.Contains(err.Error(), model) || !strings.Contains(err.Error(), "largest context that fits is") {
		t.Fatalf("load with ctx 1e9: %v", err)
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
	if c := cpu.ContextBytes(s.model, fits, backend.KVF16); c > avail || cpu.ContextBytes(s.model, fits+1, backend.KVF16) <= avail {
		t.Errorf("named %d positions (%d bytes); the next one must not fit in %d", fits, c, avail)
	}
}
