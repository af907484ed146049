package engine

import (
	"strings"
	"testing"
)

func TestContextWarning(t *testing.T) {
	cases := []struct {
		ctx, train int
		want       string // "" for no warning
	}{
		{2048, 256, "the context (2048) is larger than the 256 tokens"},
		{256, 256, ""},
		{128, 256, ""},
		{4096, 0, ""}, // the file does not say
	}
	for _, tc := range cases {
		got := ModelInfo{ContextSize: tc.ctx, TrainContext: tc.train}.ContextWarning()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("ctx %d, trained %d: %q, want %q", tc.ctx, tc.train, got, tc.want)
		}
	}
}
