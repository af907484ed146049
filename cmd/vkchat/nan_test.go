package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine/trace"
	"vkchat/runtime/gguf"
)

// `vkchat run --logprobs F` on a model whose weights hold NaN: the run
// fails with a message naming the problem (not finite, NaN) and the file
// and prints no text, instead of printing garbage and then failing on
// `json: unsupported value: NaN`; and F, if written at all, is an export
// replay can read.
func TestRunNaNModelSaysSo(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	norm, ok := f.Tensor("output_norm.weight")
	off := f.DataOffset + norm.Offset
	f.Close()
	if !ok {
		t.Fatal("no output_norm.weight")
	}
	binary.LittleEndian.PutUint32(data[off:], math.Float32bits(float32(math.NaN())))
	dir := t.TempDir()
	model := filepath.Join(dir, "nan.gguf")
	if err := os.WriteFile(model, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "lp.jsonl")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--model", model, "--prompt", "Once upon a time", "-n", "8",
		"--temp", "0", "--logprobs", out}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "not finite") || !strings.Contains(stderr.String(), "NaN") ||
		!strings.Contains(stderr.String(), model) || strings.Contains(stderr.String(), "unsupported value") {
		t.Fatalf("run exited %d, stderr:\n%s\nwant a failure naming the non-finite output", code, stderr.String())
	}
	if text := strings.TrimSpace(stdout.String()); text != "" {
		t.Errorf("text printed from NaN logits: %q", text)
	}
	if ef, err := os.Open(out); err == nil {
		_, _, rerr := trace.Read(ef, out)
		ef.Close()
		if rerr != nil {
			t.Fatalf("the export left behind does not read: %v", rerr)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".lp.jsonl.*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
