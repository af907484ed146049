package engine

import (
	"context"
	"slices"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/sample"
)

// plainBackend hides a backend's HeadBackend methods, so the session reads
// the whole logits every step.
type plainBackend struct{ backend.Backend }

// TestHeadSamplingMatchesLogits: on a backend that reduces the logits on its
// device, generation draws the same tokens and reports the same candidates
// as from the whole logits, for settings the head serves (sampled, seeded)
// and ones it cannot (a repeat penalty, top-k off), and previews agree.
func TestHeadSamplingMatchesLogits(t *testing.T) {
	if !slices.Contains(testBackends(t), "vulkan") {
		t.Skip("no Vulkan backend here: the head is reduced by the Vulkan backend")
	}
	for _, tc := range []struct {
		name     string
		p        func(p *sample.Params)
		wantHead bool // the last step read only the head
	}{
		{"defaults", func(p *sample.Params) {}, true},
		{"top-k 5, hot", func(p *sample.Params) { p.TopK = 5; p.Temperature = 1.5 }, true},
		{"repeat penalty", func(p *sample.Params) { p.RepeatPenalty = 1.3 }, false},
		{"top-k off", func(p *sample.Params) { p.TopK = 0 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sample.Defaults()
			p.Seed = 7
			tc.p(&p)
			var runs [2][]Event
			var previews [2]sample.Result
			for i := range runs {
				s, err := Load(context.Background(), testenv.Model(t, "stories260K.gguf"),
					Options{Backend: "vulkan", ContextSize: 512, Template: "none", DeviceHead: backend.HeadOn})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				if _, ok := s.be.(backend.HeadBackend); !ok {
					t.Fatal("the Vulkan backend does not implement backend.HeadBackend")
				}
				if i == 1 {
					s.be = plainBackend{s.be}
				}
				s.SetParams(p)
				evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 60})
				if err != nil {
					t.Fatal(err)
				}
				runs[i] = evs
				if i == 0 && (s.head != nil) != tc.wantHead {
					t.Errorf("last step read the head: %v, want %v", s.head != nil, tc.wantHead)
				}
				pp := p
				pp.TopK, pp.RepeatPenalty = 0, 1.2 // beyond any head
				previews[i], _ = s.Preview(pp)
			}
			a, b := tokens(runs[0]), tokens(runs[1])
			if len(a) != len(b) || len(a) == 0 {
				t.Fatalf("%d tokens with the head, %d without", len(a), len(b))
			}
			for i := range a {
				if a[i].ID != b[i].ID || len(a[i].Candidates) != len(b[i].Candidates) {
					t.Fatalf("token %d: %d (%d candidates) with the head, %d (%d) without", i, a[i].ID, len(a[i].Candidates), b[i].ID, len(b[i].Candidates))
				}
				for j, c := range a[i].Candidates {
					d := b[i].Candidates[j]
					if c.ID != d.ID || c.Cut != d.Cut || abs32(c.Prob-d.Prob) > 1e-5 || abs32(c.Final-d.Final) > 1e-5 {
						t.Fatalf("token %d candidate %d: %+v with the head, %+v without", i, j, c, d)
					}
				}
			}
			if previews[0].Token != previews[1].Token || len(previews[0].Candidates) == 0 {
				t.Errorf("preview beyond the head: %d, from the logits %d", previews[0].Token, previews[1].Token)
			}
		})
	}
}

func tokens(evs []Event) []*TokenInfo {
	var out []*TokenInfo
	for _, e := range evs {
		if e.Kind == EventToken {
			out = append(out, e.Token)
		}
	}
	return out
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}
