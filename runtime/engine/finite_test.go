package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// nanModel copies the demo model with one weight set to NaN (the output
// norm's first element, so every logit is NaN) and returns the copy's path.
func nanModel(t testing.TB) string {
	t.Helper()
	src := testenv.Model(t, "stories260K.gguf")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	norm, ok := f.Tensor("output_norm.weight")
	if !ok || norm.Type != ggml.F32 {
		t.Fatalf("output_norm.weight: %v, %+v; want an F32 vector", ok, norm)
	}
	off := f.DataOffset + norm.Offset
	binary.LittleEndian.PutUint32(data[off:], math.Float32bits(float32(math.NaN())))
	p := filepath.Join(t.TempDir(), "nan.gguf")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A model whose weights hold NaN: the reply stops at once with
// ErrNonFinite, naming the problem and the file, instead of drawing tokens
// from NaN logits (garbage on screen, and a NaN log-probability that the
// --logprobs and /export JSON then failed on); Evaluate too.
func TestNonFiniteLogitsStopTheReply(t *testing.T) {
	p := nanModel(t)
	s, err := Load(context.Background(), p, Options{Backend: "cpu", ContextSize: 128, Template: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetParams(greedy())
	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 5})
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "NaN") || !strings.Contains(err.Error(), p) {
		t.Fatalf("Generate: %v, want ErrNonFinite saying NaN and naming %s", err, p)
	}
	for _, e := range evs {
		if e.Kind == EventToken {
			t.Fatalf("a token was drawn from NaN logits: %+v", e.Token)
		}
	}
	if d := evs[len(evs)-1]; d.Kind != EventDone || d.Done.Reason != StopError || !errors.Is(d.Done.Err, ErrNonFinite) {
		t.Fatalf("last event %+v", evs[len(evs)-1])
	}
	if _, err := s.Evaluate(context.Background(), "Once upon a time", 3, 5); !errors.Is(err, ErrNonFinite) {
		t.Fatalf("Evaluate: %v, want ErrNonFinite", err)
	}
}

func TestCheckFinite(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		logits []float32
		want   string // "" for none
	}{
		{[]float32{1, 2, 3}, ""},
		{[]float32{1, -inf, 3}, ""},
		{[]float32{1, float32(math.NaN()), 3}, "NaN in 1 of 3"},
		{[]float32{1, inf, 3}, "+Inf in 1 of 3"},
		{[]float32{-inf, -inf}, "every logit -Inf"},
	} {
		err := checkFinite(nextDist{logits: tc.logits}, 4, "m.gguf")
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.logits, err, tc.want)
		}
	}
}
