package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"vkchat/internal/testenv"
)

// An interrupt while the model loads must end the command at once with a
// clear message, not wait for the load to finish.
func TestInterruptDuringLoad(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	err := runRun(ctx, []string{"--model", testenv.Model(t, "stories260K.gguf"), "--prompt", "hi", "-n", "1"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "interrupted while loading") {
		t.Fatalf("got %v, want an interrupted-while-loading error", err)
	}
}
