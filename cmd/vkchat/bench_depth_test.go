package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"vkchat/internal/testenv"
)

// TestBenchDepth: --depth starts the prefill and decode tests at that
// context position (the rows say so) and the bound counts the cache read
// there.
func TestBenchDepth(t *testing.T) {
	path := testenv.Model(t, "stories260K.gguf")
	run := func(args ...string) []benchResult {
		t.Helper()
		var out, errb bytes.Buffer
		args = append([]string{"--model", path, "--backend", "cpu", "-p", "0", "-n", "4", "-r", "1", "--json"}, args...)
		if err := runBench(context.Background(), args, &out, &errb); err != nil {
			t.Fatalf("bench %v: %v\n%s", args, err, errb.String())
		}
		var rows []benchResult
		if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("bench %v: %v, rows %s", args, err, out.String())
		}
		return rows
	}
	shallow, deep := run()[0], run("--depth", "200")[0]
	if shallow.Test != "tg4" || deep.Test != "tg4 @ d200" {
		t.Errorf("tests %q and %q, want tg4 and tg4 @ d200", shallow.Test, deep.Test)
	}
	if !(deep.TokensPerSecond > 0) {
		t.Errorf("decode at depth 200: %g tok/s", deep.TokensPerSecond)
	}
	if shallow.BytesPerToken > 0 && deep.BytesPerToken <= shallow.BytesPerToken {
		t.Errorf("bytes per token at depth 200 (%d) not above those at 0 (%d): the cache read is not counted", deep.BytesPerToken, shallow.BytesPerToken)
	}
	// prefill starts there too: its row says so, and it runs (a prompt
	// past a cache of only depth positions would fail)
	pp := run("-p", "8", "-n", "0", "--depth", "200")[0]
	if pp.Test != "pp8 @ d200" || !(pp.TokensPerSecond > 0) {
		t.Errorf("prefill at depth 200: test %q, %g tok/s", pp.Test, pp.TokensPerSecond)
	}
	var out, errb bytes.Buffer
	if err := runBench(context.Background(), []string{"--model", path, "--depth", "-1"}, &out, &errb); err == nil {
		t.Error("--depth -1 accepted")
	}
}
