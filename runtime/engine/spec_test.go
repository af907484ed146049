package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/gguf"
	"vkchat/runtime/sample"
)

// specModels are attention-only and hybrid models (a DeltaNet state, a
// short-convolution state) whose greedy replies speculation must leave
// unchanged.
var specModels = []string{"stories260K", "2026/synth-qwen35-F32", "2026/synth-lfm2-F32"}

// specRun generates n tokens of prompt with params and returns the
// tokens and the marks.
func specRun(t *testing.T, s *Session, prompt string, n int) ([]int32, []*SpecMark, *DoneInfo) {
	t.Helper()
	var ids []int32
	var marks []*SpecMark
	var done *DoneInfo
	err := s.Generate(context.Background(), Request{Messages: userMsg(prompt), MaxTokens: n}, func(e Event) {
		switch e.Kind {
		case EventToken:
			ids = append(ids, e.Token.ID)
			marks = append(marks, e.Token.Spec)
		case EventDone:
			done = e.Done
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, marks, done
}

func loadSpec(t *testing.T, be, name string, o SpecOptions) *Session {
	t.Helper()
	s, err := Load(context.Background(), testenv.Model(t, name+".gguf"), Options{Backend: be, ContextSize: 256, Template: "none", Spec: o})
	if err != nil {
		if errors.Is(err, backend.ErrUnsupported) || strings.Contains(err.Error(), "is not supported") {
			t.Skipf("%s: not run by the %s backend yet: %v", name, be, err)
		}
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fates(marks []*SpecMark) map[SpecFate]int {
	out := map[SpecFate]int{}
	for _, m := range marks {
		if m != nil {
			out[m.Fate]++
		}
	}
	return out
}

// TestSpecGreedyMatchesPlain: greedy with n-gram lookup and with a draft
// model (the target itself, so every draft is accepted) gives the reply
// plain decoding gives, on every backend, attention-only and hybrid; the
// n-gram runs must have both accepted and corrected drafts, the draft
// model's accepted drafts and bonus tokens, so acceptance, the bonus row
// and rollback all run. Two turns: the second reuses the first's cache
// after a round may have left it past the reply.
func TestSpecGreedyMatchesPlain(t *testing.T) {
	const n = 64
	prompts := []string{"Once upon a time", "the the the cat sat on the mat and the"}
	for _, be := range testBackends(t) {
		for _, name := range specModels {
			plain := loadSpec(t, be, name, SpecOptions{})
			plain.SetParams(greedy())
			var want [][]int32
			for _, p := range prompts {
				ids, marks, _ := specRun(t, plain, p, n)
				if f := fates(marks); len(f) > 0 {
					t.Fatalf("%s/%s: marks without speculation: %v", be, name, f)
				}
				want = append(want, ids)
			}
			sources := []SpecOptions{{Mode: SpecNgram}, {Mode: SpecNgram, Max: 2}, {Mode: SpecDraft, Draft: testenv.Model(t, name+".gguf")}}
			if q4, ok := strings.CutSuffix(name, "-F32"); ok {
				// The same weights quantized: a draft model that
				// mostly agrees, so hybrids see acceptance and
				// rollback in one run.
				sources = append(sources, SpecOptions{Mode: SpecDraft, Max: 4, Draft: testenv.Model(t, q4+"-Q4_K_M.gguf")})
			}
			all := map[SpecFate]int{}
			for _, o := range sources {
				s := loadSpec(t, be, name, o)
				s.SetParams(greedy())
				total := map[SpecFate]int{}
				for i, p := range prompts {
					ids, marks, done := specRun(t, s, p, n)
					if !slices.Equal(ids, want[i]) {
						t.Fatalf("%s/%s --spec %s (max %d) %q:\n got %v\nwant %v", be, name, o.Mode, o.Max, p, ids, want[i])
					}
					if done.Generated != len(ids) {
						t.Errorf("%s/%s: done says %d tokens, %d came", be, name, done.Generated, len(ids))
					}
					for f, c := range fates(marks) {
						total[f] += c
					}
				}
				t.Logf("%s/%s --spec %s max %d %s: %v", be, name, o.Mode, o.Max, o.Draft, total)
				for f, c := range total {
					all[f] += c
				}
				if o.Mode == SpecDraft && strings.HasSuffix(o.Draft, name+".gguf") {
					if total[FateAccepted] == 0 || total[FateBonus] == 0 || total[FateCorrected] != 0 {
						t.Errorf("%s/%s draft = target: fates %v, want only accepted drafts and bonus tokens", be, name, total)
					}
				}
			}
			if all[FateAccepted] == 0 || all[FateCorrected] == 0 || all[FateBonus] == 0 {
				t.Errorf("%s/%s: fates %v over every source, want accepted, corrected and bonus", be, name, all)
			}
		}
	}
}

// TestSpecSampledMatchesPlain: under sampling the rule (each row drawn by
// the session's sampler, a draft accepted on an exact match) draws every
// token from the target's own distribution, with one draw a token: the
// same seed gives the same reply with and without speculation, over many
// seeds, so the distribution of replies is plain sampling's.
func TestSpecSampledMatchesPlain(t *testing.T) {
	name := "stories260K"
	plain := loadSpec(t, "cpu", name, SpecOptions{})
	spec := loadSpec(t, "cpu", name, SpecOptions{Mode: SpecDraft, Draft: testenv.Model(t, name+".gguf")})
	accepted, corrected := 0, 0
	firsts := map[int32]int{}
	for seed := range uint64(24) {
		p := sample.Defaults()
		p.Temperature, p.Seed = 1.0, seed
		plain.SetParams(p)
		spec.SetParams(p)
		want, _, _ := specRun(t, plain, "Once upon a time", 24)
		got, marks, _ := specRun(t, spec, "Once upon a time", 24)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: speculative %v, plain %v", seed, got, want)
		}
		f := fates(marks)
		accepted += f[FateAccepted]
		corrected += f[FateCorrected]
		firsts[got[1]]++
	}
	// A greedy draft model against a sampling target is rejected where
	// the draw leaves the argmax: both must have happened.
	if accepted == 0 || corrected == 0 {
		t.Errorf("accepted %d, corrected %d: want both", accepted, corrected)
	}
	if len(firsts) < 2 {
		t.Errorf("24 seeds drew one second token %v: the test did not sample", firsts)
	}
}

// TestSpecDraftVocabMismatch: a draft model of another vocabulary is
// refused, naming both files.
func TestSpecDraftVocabMismatch(t *testing.T) {
	target := testenv.Model(t, "stories260K.gguf")
	f, err := gguf.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sp := fromgguf.Spec(f) // its tensors are f's mapped bytes until Encode
	toks := slices.Clone(sp.Tokens())
	toks[300] = "<not-the-target's>"
	sp.Set("tokenizer.ggml.tokens", toks)
	b, err := sp.Encode(gguf.NewWriter())
	if err != nil {
		t.Fatal(err)
	}
	draft := filepath.Join(t.TempDir(), "draft.gguf")
	if err := os.WriteFile(draft, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(context.Background(), target, Options{Backend: "cpu", ContextSize: 128, Template: "none", Spec: SpecOptions{Mode: SpecDraft, Draft: draft}})
	if err == nil || !strings.Contains(err.Error(), target) || !strings.Contains(err.Error(), draft) || !strings.Contains(err.Error(), "token 300") {
		t.Fatalf("err %v, want a vocabulary mismatch naming %s and %s", err, target, draft)
	}
	if _, err := Load(context.Background(), target, Options{Backend: "cpu", ContextSize: 128, Template: "none", Spec: SpecOptions{Mode: SpecDraft}}); err == nil || !strings.Contains(err.Error(), "--draft") {
		t.Fatalf("no draft file: err %v, want one naming --draft", err)
	}
}

func TestSpecLength(t *testing.T) {
	for _, c := range []struct{ cur, drafted, accepted, mx, want int }{
		{0, 8, 8, 8, 8}, {3, 3, 3, 8, 5}, {7, 7, 7, 8, 8}, {8, 8, 2, 8, 3}, {5, 5, 0, 8, 1}, {2, 1, 1, 8, 4},
	} {
		if got := specLength(c.cur, c.drafted, c.accepted, c.mx); got != c.want {
			t.Errorf("specLength%v = %d", c, got)
		}
	}
}

func TestNgramLookup(t *testing.T) {
	h := []int32{1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 2, 3}
	d, _ := newNgramDrafter().Propose(context.Background(), h, 3)
	// "2 3" last occurred before at 7 ("3 7 2 3"): the latest match wins.
	if len(d) != 3 || d[0].Token != 7 || d[1].Token != 2 || d[2].Token != 3 {
		t.Errorf("drafts %v, want 7 2 3", d)
	}
	if d, _ := newNgramDrafter().Propose(context.Background(), []int32{1, 2, 3}, 4); len(d) != 0 {
		t.Errorf("no repeat, drafts %v", d)
	}
	// A cycle whose latest occurrence ends at the end: the drafts go on
	// around it.
	d, _ = newNgramDrafter().Propose(context.Background(), []int32{9, 4, 5, 4, 5, 4}, 5)
	if got := []int32{d[0].Token, d[1].Token, d[2].Token, d[3].Token, d[4].Token}; len(d) != 5 || !slices.Equal(got, []int32{5, 4, 5, 4, 5}) {
		t.Errorf("cycle drafts %v, want 5 4 5 4 5", d)
	}
}

// TestSpecKeepsPromptCheckpoint: a hybrid model's speculative reply saves
// a checkpoint before each round and drops it once the round settles, so
// the bounded list still holds the prompt's after many rounds: the same
// request again (a regenerate) reads nothing twice.
func TestSpecKeepsPromptCheckpoint(t *testing.T) {
	for _, be := range testBackends(t) {
		s := loadSpec(t, be, "2026/synth-qwen35-F32", SpecOptions{Mode: SpecDraft, Max: 2, Draft: testenv.Model(t, "2026/synth-qwen35-Q4_K_M.gguf")})
		s.SetParams(greedy())
		req := Request{Messages: userMsg("Once upon a time"), MaxTokens: 96}
		var pre []*PrefillInfo
		rounds := 0
		for range 2 {
			err := s.Generate(context.Background(), req, func(e Event) {
				switch e.Kind {
				case EventPrefill:
					pre = append(pre, e.Prefill)
				case EventToken:
					if e.Token.Spec != nil {
						rounds = e.Token.Spec.Totals.Rounds
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if rounds < 20 {
			t.Fatalf("%s: %d rounds, want more than the backend keeps checkpoints", be, rounds)
		}
		if pre[1].Reread != 0 {
			t.Errorf("%s: the regenerate read %d tokens again (checkpoints %v): the prompt's checkpoint is gone", be, pre[1].Reread, s.Stats().Checkpoints)
		}
	}
}
