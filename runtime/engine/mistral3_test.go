package engine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// TestMistral3FeaturesMatter: the synth mistral3 file matches llama.cpp
// because the temperature tuning and YaRN's magnitude are applied — the
// same weights without attention.temperature_scale, or without
// rope.scaling.yarn_log_multiplier, miss the reference by far more than
// the 0.01 bound (../shared/docs/architectures-2026b.md ablates them by 1.43 and
// 5.49 on the top-10).
func TestMistral3FeaturesMatter(t *testing.T) {
	const name = "2026b/synth-mistral3-F32"
	r := loadReference(t, name+".json")
	f, err := gguf.Open(testenv.Model(t, name+".gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	worst := func(t *testing.T, del string) float64 {
		path := testenv.Model(t, name+".gguf")
		if del != "" {
			spec := fromgguf.Spec(f)
			spec.Del(del)
			data, err := spec.Encode(gguf.NewWriter())
			if err != nil {
				t.Fatal(err)
			}
			path = filepath.Join(t.TempDir(), "m.gguf")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Load(context.Background(), path, Options{Backend: "cpu", ContextSize: 512, Template: "none"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		w := 0.0
		for p, logits := range teacherForced(t, s, r) {
			for _, e := range r.Steps[p].Top[:5] {
				w = math.Max(w, math.Abs(float64(logits[int(e[0])])-e[1]))
			}
		}
		return w
	}
	with := worst(t, "")
	if with > 0.01 {
		t.Errorf("the file as it is: max |Δlogit| %.4f, want ≤ 0.01", with)
	}
	for _, key := range []string{"mistral3.attention.temperature_scale", "mistral3.rope.scaling.yarn_log_multiplier"} {
		if without := worst(t, key); without < 0.5 {
			t.Errorf("without %s: max |Δlogit| %.4f, want ≥ 0.5 (the feature is not what the match rests on)", key, without)
		} else {
			t.Logf("without %s: max |Δlogit| %.3f (with it %.4f)", key, without, with)
		}
	}
}
