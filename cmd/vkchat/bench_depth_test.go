package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"vkchat/internal/testenv"
)

// TestBenchDepth: --depth starts the decode test at that context position
// (the row says so) and the bound counts the cache read there.
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
	var out, errb bytes.Buffer
	if err := runBench(context.Background(), []string{"--model", path, "--depth", "-1"}, &out, &errb); err == nil {
		t.Error("--depth -1 accepted")
	}
}
