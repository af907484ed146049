package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"vkchat/models/hub/hubtest"
)

// TestPullModelsRm drives the three store commands against a fake Hub.
func TestPullModelsRm(t *testing.T) {
	s := hubtest.NewServer(t)
	src := hubtest.GGUF(t, 64, 64, map[string]any{"general.file_type": uint32(7)})
	s.AddRepo("org/Mini-135M-GGUF", hubtest.File{Path: "Mini-135M-Q8_0.gguf", Data: src})
	t.Setenv("HF_ENDPOINT", s.URL)
	t.Setenv("VKCHAT_MODELS", t.TempDir())
	ctx := context.Background()
	sh := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		rc := run(ctx, args, &out, &errb)
		return rc, out.String(), errb.String()
	}

	rc, out, errs := sh("pull", "hf:org/Mini-135M-GGUF")
	if rc != 0 {
		t.Fatalf("pull: rc %d, stderr %s", rc, errs)
	}
	path := strings.TrimSpace(out)
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("pulled file %s differs from the source: %v", path, err)
	}
	if !strings.Contains(errs, "Mini-135M-Q8_0.gguf") || !strings.Contains(errs, "100%") || strings.Contains(errs, "\r") {
		t.Errorf("progress on a non-terminal: %q", errs)
	}

	rc, out, _ = sh("models")
	if rc != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "org/Mini-135M-GGUF/Mini-135M-Q8_0  llama") || !strings.Contains(out, "Q8_0") {
		t.Errorf("models: rc %d\n%s", rc, out)
	}

	if rc, _, errs = sh("rm", "nope"); rc != 1 || !strings.Contains(errs, `no model named "nope"`) {
		t.Errorf("rm nope: rc %d, %s", rc, errs)
	}
	if rc, out, errs = sh("rm", "Mini"); rc != 0 || !strings.Contains(out, "removed org/Mini-135M-GGUF/Mini-135M-Q8_0") {
		t.Errorf("rm: rc %d, %s%s", rc, out, errs)
	}
	if rc, out, _ = sh("models"); rc != 0 || !strings.Contains(out, "No models") {
		t.Errorf("models after rm: rc %d, %s", rc, out)
	}

	if rc, _, errs = sh("pull", "hf:org/Missing-GGUF"); rc != 1 || !strings.Contains(errs, "vkchat pull: repository org/Missing-GGUF not found") {
		t.Errorf("pull missing: rc %d, %s", rc, errs)
	}
	if rc, _, errs = sh("pull", "-h"); rc != 0 || !strings.Contains(errs, "Usage: vkchat pull") {
		t.Errorf("pull -h: rc %d, %s", rc, errs)
	}
	if rc, _, _ = sh("rm"); rc != 1 {
		t.Errorf("rm without a name: rc %d", rc)
	}
}
