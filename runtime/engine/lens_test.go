package engine

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
)

// lensReference is the part of shared/reference/lens/*.json the checks read.
type lensReference struct {
	Model        string  `json:"model"`
	Prompt       string  `json:"prompt"`
	PromptTokens []int32 `json:"prompt_tokens"`
	NLayer       int     `json:"n_layer"`
	Positions    []struct {
		Pos    int `json:"pos"`
		Layers []struct {
			Layer int          `json:"layer"`
			Top   [][3]float64 `json:"top"`
		} `json:"layers"`
		SettleLayer int `json:"settle_layer"`
	} `json:"positions"`
}

// TestLensMatchesLlamaCpp: on every lens reference (llama.cpp's own layer
// outputs put through the head), each backend's lens has the same top-1
// at every layer and position where the reference's top two are more than
// 0.01 apart, and every reference top-10 logit within 0.01; the last layer
// is the model's own logits, bit for bit.
func TestLensMatchesLlamaCpp(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.Shared(t, filepath.Join("reference", "lens")), "*.json"))
	if len(files) == 0 {
		t.Skip("no lens references")
	}
	for _, be := range testBackends(t) {
		for _, f := range files {
			t.Run(be+"/"+filepath.Base(f), func(t *testing.T) {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				var r lensReference
				if err := json.Unmarshal(raw, &r); err != nil {
					t.Fatal(err)
				}
				model := r.Model
				if strings.Contains(model, "qwen35") {
					model = "2026/" + model
				}
				s := loadSession(t, model, be)
				v := s.model.Vocab
				res, err := s.EvaluateLens(context.Background(), r.Prompt, v)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(res.PromptTokens, r.PromptTokens) {
					t.Fatalf("prompt tokens %v, llama.cpp %v", res.PromptTokens, r.PromptTokens)
				}
				if res.Layers != r.NLayer || len(res.Positions) != len(r.Positions) {
					t.Fatalf("%d layers × %d positions, reference %d × %d", res.Layers, len(res.Positions), r.NLayer, len(r.Positions))
				}
				worst, settled := 0.0, 0
				for p, rp := range r.Positions {
					got := res.Positions[p]
					for l, rl := range rp.Layers {
						logit := map[int]float64{}
						for _, e := range got.Layers[l].Top {
							logit[int(e[0])] = e[1]
						}
						for _, e := range rl.Top {
							d := math.Abs(logit[int(e[0])] - e[1])
							worst = math.Max(worst, d)
							if d > 0.01 {
								t.Errorf("pos %d layer %d token %d: lens logit %.5f, llama.cpp %.5f", p, l, int(e[0]), logit[int(e[0])], e[1])
							}
						}
						if rl.Top[0][1]-rl.Top[1][1] > 0.01 && got.Layers[l].Top[0][0] != rl.Top[0][0] {
							t.Errorf("pos %d layer %d: top-1 %d, llama.cpp %d", p, l, int(got.Layers[l].Top[0][0]), int(rl.Top[0][0]))
						}
					}
					if got.SettleLayer == rp.SettleLayer {
						settled++
					}
				}
				t.Logf("%s: max |Δlogit| over the reference top-10s %.2e; settle layer equal at %d of %d positions", r.Model, worst, settled, len(r.Positions))
				// the last layer's lens is the model's own output
				ev, err := s.Evaluate(context.Background(), r.Prompt, 0, v)
				if err != nil {
					t.Fatal(err)
				}
				for p, step := range ev.Steps {
					last := res.Positions[p].Layers[res.Layers-1].Top
					for j := range step.Top {
						if step.Top[j][0] != last[j][0] || step.Top[j][1] != last[j][1] {
							t.Fatalf("pos %d: the last layer's lens %v differs from the logits %v", p, last[j], step.Top[j])
						}
					}
				}
			})
		}
	}
}

// TestLensAtMatchesEvaluateLens: the lens at one position of a longer
// sequence, with the cache holding another conversation's prefix or this
// one's, is the whole-prompt lens's at that position (both backends' cache
// reuse and a hybrid's state rewind included).
func TestLensAtMatchesEvaluateLens(t *testing.T) {
	for _, be := range testBackends(t) {
		for _, model := range []string{"stories260K.gguf", "2026/synth-qwen35-F32.gguf"} {
			t.Run(be+"/"+model, func(t *testing.T) {
				s := loadSession(t, model, be)
				ctx := context.Background()
				const prompt = "Once upon a time, there was a little girl named Lily."
				whole, err := s.EvaluateLens(ctx, prompt, 8)
				if err != nil {
					t.Fatal(err)
				}
				ids := whole.PromptTokens
				for _, at := range []int{len(ids) - 1, 3, len(ids) / 2, 0, len(ids) - 2} {
					got, err := s.LensAt(ctx, ids[:at+1], 8)
					if err != nil {
						t.Fatal(err)
					}
					want := whole.Positions[at]
					if got.Pos != at || got.SettleLayer != want.SettleLayer || !slices.Equal(got.Top1ByLayer, want.Top1ByLayer) {
						t.Fatalf("at %d: pos %d settle %d top-1s %v, want settle %d %v", at, got.Pos, got.SettleLayer, got.Top1ByLayer, want.SettleLayer, want.Top1ByLayer)
					}
					for l := range want.Layers {
						for j, e := range want.Layers[l].Top {
							if d := math.Abs(got.Layers[l].Top[j][1] - e[1]); got.Layers[l].Top[j][0] != e[0] || d > 1e-4 {
								t.Errorf("at %d layer %d: %v, want %v", at, l, got.Layers[l].Top[j], e)
							}
						}
					}
				}
			})
		}
	}
}

// noLensBackend hides every method but the Backend interface's.
type noLensBackend struct{ backend.Backend }

// TestLensRefusedByName: a backend without the lens says so, by name.
func TestLensRefusedByName(t *testing.T) {
	s := loadSession(t, "stories260K.gguf", "cpu")
	s.be = noLensBackend{s.be}
	if _, err := s.EvaluateLens(context.Background(), "Once", 10); !errors.Is(err, ErrNoLens) {
		t.Errorf("lens on a backend without one: %v, want ErrNoLens", err)
	}
}
