package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"vkchat/internal/testenv"
)

// TestBenchSpec: --spec adds a row without speculation and one with it,
// from the engine's own loop; the row with it carries the drafting
// figures (a draft model identical to the target accepts every draft)
// and its speed against the other row. Bad values are refused by name.
func TestBenchSpec(t *testing.T) {
	path := testenv.Model(t, "stories260K.gguf")
	var out, errb bytes.Buffer
	args := []string{"--model", path, "--backend", "cpu", "-p", "0", "-n", "24", "-r", "1", "--json", "--spec", "draft", "--draft", path, "--spec-lead", "16"}
	if err := runBench(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var rows []benchResult
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(rows) != 3 || rows[1].Test != "tg24 spec off" || rows[2].Test != "tg24 spec draft" {
		t.Fatalf("rows %+v, want tg24, then tg24 spec off and spec draft", rows)
	}
	off, on := rows[1], rows[2]
	if off.Drafted != 0 || on.Rounds == 0 || on.Drafted == 0 || on.Accepted != on.Drafted || on.AcceptRate != 1 {
		t.Errorf("spec off %+v, draft = target %+v: want no drafts, then every draft accepted", off.specFields, on.specFields)
	}
	if want := on.TokensPerSecond / off.TokensPerSecond; on.Speedup != want || !(on.TokensPerRound > 1) {
		t.Errorf("speedup %g (want %g), tokens per round %g", on.Speedup, want, on.TokensPerRound)
	}
	for _, bad := range [][]string{{"--spec", "bogus"}, {"--spec", "ngram", "--spec-max", "-1"}, {"--spec", "off"}, {"--spec", "draft"}, {"--spec", "ngram", "--spec-lead", "-1"}} {
		err := runBench(context.Background(), append([]string{"--model", path, "--backend", "cpu", "-p", "0", "-n", "4", "-r", "1"}, bad...), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "spec") && !strings.Contains(err.Error(), "draft") {
			t.Errorf("bench %v: err %v, want a refusal naming the flag", bad, err)
		}
	}
}

// TestSpecFlags: --spec, --spec-max and --draft are checked before a
// model loads.
func TestRepeats(t *testing.T) {
	loop := []int32{7, 8, 9}
	for range 10 {
		loop = append(loop, 4, 5, 6)
	}
	if repeats(loop) != 3 || repeats(loop[:20]) != 0 {
		t.Errorf("a 3-token cycle: repeats %v (want true), its first 20 tokens %v (want false)", repeats(loop), repeats(loop[:20]))
	}
	var walk []int32
	for i := range 40 {
		walk = append(walk, int32(i))
	}
	if repeats(walk) != 0 {
		t.Error("no repetition seen as one")
	}
}

func TestSpecFlags(t *testing.T) {
	for _, c := range []struct {
		e    engineFlags
		want string
	}{
		{engineFlags{spec: "fast"}, `unknown speculative mode "fast"`},
		{engineFlags{spec: "ngram", specMax: -2}, "--spec-max -2"},
		{engineFlags{spec: "ngram", draft: "x.gguf"}, "--draft x.gguf needs --spec draft"},
	} {
		if _, err := c.e.specOptions(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.e, err, c.want)
		}
	}
	o, err := (&engineFlags{spec: "draft", specMax: 3, draft: "d.gguf"}).specOptions()
	if err != nil || o.Mode != "draft" || o.Max != 3 || o.Draft != "d.gguf" {
		t.Errorf("specOptions = %+v, %v", o, err)
	}
}
