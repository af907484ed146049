package sampler

import (
	"testing"

	"vkchat/runtime/sample"
)

func TestSamplerStepLimits(t *testing.T) {
	tests := []struct {
		name string
		f    func(sample.Params, int) sample.Params
		in   sample.Params
		dir  int
		want sample.Params
	}{
		{"temp floor", stepTemperature, sample.Params{Temperature: 0}, -1, sample.Params{Temperature: 0}},
		{"temp ceiling", stepTemperature, sample.Params{Temperature: 5}, +1, sample.Params{Temperature: 5}},
		{"temp grid", stepTemperature, sample.Params{Temperature: 0.30000001}, +1, sample.Params{Temperature: 0.4}},
		{"top-p ceiling", stepTopP, sample.Params{TopP: 1}, +1, sample.Params{TopP: 1}},
		{"top-p floor", stepTopP, sample.Params{TopP: 0.05}, -1, sample.Params{TopP: 0.05}},
		{"top-k off lowers to 100", stepTopK, sample.Params{TopK: 0}, -1, sample.Params{TopK: 100}},
		{"top-k off stays off", stepTopK, sample.Params{TopK: 0}, +1, sample.Params{TopK: 0}},
		{"top-k 100 raises to off", stepTopK, sample.Params{TopK: 100}, +1, sample.Params{TopK: 0}},
		{"top-k small steps", stepTopK, sample.Params{TopK: 3}, -1, sample.Params{TopK: 2}},
		{"top-k floor", stepTopK, sample.Params{TopK: 1}, -1, sample.Params{TopK: 1}},
		{"min-p floor", stepMinP, sample.Params{MinP: 0}, -1, sample.Params{MinP: 0}},
		{"repeat ceiling", stepRepeat, sample.Params{RepeatPenalty: 3}, +1, sample.Params{RepeatPenalty: 3}},
		{"repeat floor", stepRepeat, sample.Params{RepeatPenalty: 0.5}, -1, sample.Params{RepeatPenalty: 0.5}},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in, tt.dir); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestUnescapeStop(t *testing.T) {
	for in, want := range map[string]string{`\n\n`: "\n\n", `a\tb`: "a\tb", `\\n`: `\n`, `C:\x`: `C:\x`, `end\`: `end\`} {
		if got := unescapeStop(in); got != want {
			t.Errorf("unescapeStop(%q) = %q, want %q", in, got, want)
		}
	}
}
