package trace

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// A token whose log-probability is NaN (or an alternative's infinite) is
// refused by Token with an error naming the token, before anything of its
// line is written; json.Marshal's own "unsupported value: NaN" named
// neither.
func TestWriterRefusesNonFinite(t *testing.T) {
	text := func(int32) string { return "x" }
	for _, tok := range []engine.TokenInfo{
		{Index: 3, ID: 7, LogProb: math.NaN(), Params: sample.Defaults()},
		{Index: 3, ID: 7, LogProb: -1, Top: []engine.TokenLogprob{{ID: 1, Logprob: math.Inf(-1)}}, Params: sample.Defaults()},
	} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Params: ParamsOf(sample.Defaults())}, text)
		if err != nil {
			t.Fatal(err)
		}
		err = w.Token(tok)
		if err == nil || !strings.Contains(err.Error(), "token 3") || !strings.Contains(err.Error(), "NaN or infinite") {
			t.Errorf("Token: %v, want an error naming token 3 and what is wrong", err)
		}
		w.Flush()
		if n := strings.Count(buf.String(), "\n"); n != 1 {
			t.Errorf("%d lines written, want the header's only:\n%s", n, buf.String())
		}
	}
}
