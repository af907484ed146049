package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
)

func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	rc := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), rc
}

// TestContextAndCountFlags: --ctx out of range (2^62 panicked in an
// allocation, from 2^55 info's estimate wrapped to "KV cache -256 B", -1
// was taken as the model's own) and a negative -n are refused by every
// command that takes them, naming the flag and the bound; the largest
// --ctx gives an exact estimate.
func TestContextAndCountFlags(t *testing.T) {
	model := testenv.Model(t, "stories260K.gguf")
	bound := fmt.Sprintf("want 1 to %d positions, or 0 for the model's own (at most %d)", engine.MaxContext, engine.DefaultContext)
	for _, ctx := range []string{"9223372036854775807", "4611686018427387904", "36028797018963968", "16777217", "-1", "99999999999999999999"} {
		for _, cmd := range [][]string{
			{"info", "--ctx", ctx, model},
			{"run", "--model", model, "--ctx", ctx, "-n", "1"},
			{"eval", "--model", model, "--ctx", ctx, "-n", "1"},
			{"chat", "--model", model, "--ctx", ctx},
		} {
			out, errOut, rc := runCmd(t, cmd...)
			if rc == 0 || !strings.Contains(errOut, `invalid value "`+ctx+`" for flag -ctx`) || !strings.Contains(errOut, bound) || strings.Contains(out, "KV cache") {
				t.Errorf("%v: exit %d, stderr %q; want --ctx refused with its range", cmd, rc, errOut)
			}
		}
	}
	for _, cmd := range [][]string{
		{"run", "--model", model, "-n", "-5"},
		{"eval", "--model", model, "-n", "-5"},
		{"chat", "--model", model, "-n", "-5"},
	} {
		_, errOut, rc := runCmd(t, cmd...)
		if rc == 0 || !strings.Contains(errOut, "-n -5 is negative: want 0 (") {
			t.Errorf("%v: exit %d, stderr %q; want -n refused", cmd, rc, errOut)
		}
	}
	for _, args := range [][]string{{"-p", "9223372036854775807"}, {"--depth", "9223372036854775806", "-n", "1"}, {"--depth", fmt.Sprint(engine.MaxContext)}} {
		_, errOut, rc := runCmd(t, append([]string{"bench", "--model", model, "--backend", "cpu"}, args...)...)
		if rc == 0 || !strings.Contains(errOut, fmt.Sprintf("need more than the largest context, %d positions", engine.MaxContext)) {
			t.Errorf("bench %v: exit %d, stderr %q; want the context bound named", args, rc, errOut)
		}
	}
	out, errOut, rc := runCmd(t, "info", "--ctx", fmt.Sprint(engine.MaxContext), model)
	want := fmt.Sprintf("f16: 5 layers × %d ctx × 4 kv heads × 8 head dim × 2 (K,V) × 2 B = %d B", engine.MaxContext, 5*engine.MaxContext*32*2*2)
	if rc != 0 || !strings.Contains(out, want) {
		t.Errorf("info --ctx %d: exit %d, %s%s\nwant %q", engine.MaxContext, rc, out, errOut, want)
	}
}
