package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/chat"
)

// hybridModels are the models with recurrent layers (backend.StateBackend)
// that the engine's rewind policy (checkpoint.go) must serve exactly; a
// file whose architecture the CPU backend does not run yet is skipped.
var hybridModels = []string{"2026/synth-lfm2-F32", "2026/synth-qwen35-F32", "2026/synth-qwen35moe-F32", "2026b/synth-nemotron_h-F32", "2026b/synth-granitehybrid-F32", "2026b/synth-nemotron_h_moe-F32"}

// hybridCases pairs each hybrid model with each backend under test.
func hybridCases(t *testing.T) []struct{ be, name string } {
	var out []struct{ be, name string }
	for _, be := range testBackends(t) {
		for _, name := range hybridModels {
			out = append(out, struct{ be, name string }{be, name})
		}
	}
	return out
}

// hybridFreshTol bounds how far a session that rewound to a checkpoint and
// re-read tokens may be from a fresh one: the CPU backend's products do
// not depend on how tokens are batched, nor (measured on lavapipe) do the
// Vulkan backend's: 1e-5 leaves room only for a device whose batched
// kernels round differently from its decode kernels.
const hybridFreshTol = 1e-5

// loadHybrid loads a hybrid model on a backend, skipping a file the
// backend refuses.
func loadHybrid(t *testing.T, be, name string, ctxSize int, template string) *Session {
	t.Helper()
	s, err := Load(context.Background(), testenv.Model(t, name+".gguf"), Options{Backend: be, ContextSize: ctxSize, Template: template})
	if err != nil {
		if errors.Is(err, backend.ErrUnsupported) || strings.Contains(err.Error(), "is not supported") {
			t.Skipf("%s: not run by the %s backend yet: %v", name, be, err)
		}
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	if s.stateBackend() == nil {
		t.Fatalf("%s: the backend holds no recurrent state (%d recurrent layers)", name, s.model.RecurrentLayers())
	}
	s.SetParams(greedy())
	return s
}

// hybridRun is one Generate: its tokens, the whole logits of every step,
// and the prefill and done events.
type hybridRun struct {
	toks   []TokenInfo
	logits [][]float32
	pre    *PrefillInfo
	done   *DoneInfo
}

func (r hybridRun) ids() []int32 {
	out := make([]int32, len(r.toks))
	for i, tk := range r.toks {
		out[i] = tk.ID
	}
	return out
}

func generateHybrid(t *testing.T, s *Session, req Request) hybridRun {
	t.Helper()
	var r hybridRun
	err := s.Generate(context.Background(), req, func(e Event) {
		switch e.Kind {
		case EventToken:
			r.toks = append(r.toks, *e.Token)
			s.mu.Lock()
			r.logits = append(r.logits, slices.Clone(s.logits))
			s.mu.Unlock()
		case EventPrefill:
			r.pre = e.Prefill
		case EventDone:
			r.done = e.Done
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.pre == nil || len(r.logits) == 0 || r.logits[0] == nil {
		t.Fatalf("no prefill event or no logits")
	}
	return r
}

// sameRun checks that got produced want's tokens from logits within tol,
// and returns the largest difference.
func sameRun(t *testing.T, what string, got, want hybridRun) float64 {
	t.Helper()
	if !slices.Equal(got.ids(), want.ids()) {
		t.Fatalf("%s: tokens %v, a fresh session's %v", what, got.ids(), want.ids())
	}
	worst := 0.0
	for i := range want.logits {
		for j, w := range want.logits[i] {
			worst = max(worst, math.Abs(float64(got.logits[i][j]-w)))
		}
	}
	if worst > hybridFreshTol {
		t.Errorf("%s: logits differ from a fresh session's by up to %g, bound %g", what, worst, hybridFreshTol)
	}
	return worst
}

// TestHybridForkMatchesFresh forks a greedy reply at several tokens, with
// a checkpoint every 4 generated tokens and with none inside the reply,
// in one session one fork after another. Each fork must see exactly the
// logits a fresh session computes for the prompt, the prefix and the
// forced token, and say how many cached tokens it had to read again: the
// distance from the fork point back to the latest checkpoint.
func TestHybridForkMatchesFresh(t *testing.T) {
	for _, hc := range hybridCases(t) {
		be, name := hc.be, hc.name
		for _, every := range []int{4, 1000} {
			t.Run(fmt.Sprintf("%s/%s/every%d", be, name, every), func(t *testing.T) {
				s := loadHybrid(t, be, name, 256, "none")
				s.checkpointEvery = every
				msgs := userMsg("Once upon a time, in a land far away,")
				orig := generateHybrid(t, s, Request{Messages: msgs, MaxTokens: 24})
				promptLen := orig.pre.Tokens + orig.pre.Reused
				promptIDs := slices.Clone(s.cached[:promptLen])
				// 2: before the first checkpoint inside the reply; 10 and
				// 21: after checkpoints at 8 and 20 (every 4), or long after
				// the prompt's (every 1000); 13 on a checkpoint.
				var last hybridRun
				var lastReq Request
				for _, k := range []int{21, 2, 13, 10} {
					// regenerate the original first, so that the cache
					// holds its reply and the checkpoints along it
					sameRun(t, "regenerated original", generateHybrid(t, s, Request{Messages: msgs, MaxTokens: 24}), orig)
					prefix := orig.ids()[:k]
					alt := orig.toks[k].Candidates[1].ID
					req := Request{Messages: msgs, MaxTokens: k + 6, Fork: &ForkPoint{Prefix: prefix, Token: alt}}
					// what the cache holds and the fork's prompt have in
					// common, less the last token (always recomputed)
					want := append(slices.Clone(promptIDs), prefix...)
					cached := 0
					for cached < len(s.cached) && cached < len(want)-1 && s.cached[cached] == want[cached] {
						cached++
					}
					forked := generateHybrid(t, s, req)
					fresh := generateHybrid(t, loadHybrid(t, be, name, 256, "none"), req)
					worst := sameRun(t, fmt.Sprintf("fork at %d", k), forked, fresh)
					// the forced step is the original step recomputed
					for j, w := range orig.logits[k] {
						worst = max(worst, math.Abs(float64(forked.logits[0][j]-w)))
					}
					if worst > hybridFreshTol {
						t.Errorf("fork at %d: the forced step's logits differ from the original step's by %g", k, worst)
					}
					if got := forked.pre.Tokens + forked.pre.Reused; got != promptLen+k {
						t.Errorf("fork at %d: prefill covers %d tokens, want %d", k, got, promptLen+k)
					}
					if got := forked.pre.Reused + forked.pre.Reread; got != cached || forked.pre.Reread < 0 {
						t.Errorf("fork at %d: %d reused + %d re-read, want the %d tokens cached", k, forked.pre.Reused, forked.pre.Reread, cached)
					}
					switch {
					case every == 4 && forked.pre.Reread >= every:
						t.Errorf("fork at %d: re-read %d tokens with a checkpoint every %d", k, forked.pre.Reread, every)
					case every == 1000 && forked.pre.Reread != k:
						t.Errorf("fork at %d: re-read %d tokens, want %d (from the prompt's checkpoint)", k, forked.pre.Reread, k)
					}
					last, lastReq = forked, req
					t.Logf("%s every %d: fork at %d re-read %d tokens from the checkpoint at %d in %v; checkpoints now %v; max |Δlogit| vs fresh %.3g",
						name, every, k, forked.pre.Reread, forked.pre.Reused, forked.pre.RereadDuration, s.stateBackend().Checkpoints(), worst)
				}
				// a fork of the last fork, at its third token
				f := lastReq.Fork
				prefix := append(slices.Clone(f.Prefix), last.ids()[:3]...)
				req := Request{Messages: msgs, MaxTokens: len(prefix) + 4, Fork: &ForkPoint{Prefix: prefix, Token: last.toks[3].Candidates[1].ID}}
				worst := sameRun(t, "fork of a fork", generateHybrid(t, s, req), generateHybrid(t, loadHybrid(t, be, name, 256, "none"), req))
				t.Logf("%s every %d: fork of a fork: max |Δlogit| vs fresh %.3g", name, every, worst)
			})
		}
	}
}

// TestHybridRegenerateMatchesFresh regenerates a reply (the same request
// again) after a reply long enough that, at one checkpoint per token, the
// prompt's checkpoint is gone: the backend's bound drops the oldest. Both
// the cheap case (a checkpoint right before the last prompt token) and
// the evicted one must give a fresh session's logits.
func TestHybridRegenerateMatchesFresh(t *testing.T) {
	for _, hc := range hybridCases(t) {
		be, name := hc.be, hc.name
		for _, every := range []int{1000, 1} {
			t.Run(fmt.Sprintf("%s/%s/every%d", be, name, every), func(t *testing.T) {
				s := loadHybrid(t, be, name, 256, "none")
				s.checkpointEvery = every
				req := Request{Messages: userMsg("The little dog ran"), MaxTokens: 30}
				first := generateHybrid(t, s, req)
				again := generateHybrid(t, s, req)
				fresh := generateHybrid(t, loadHybrid(t, be, name, 256, "none"), req)
				sameRun(t, "first reply", first, fresh)
				worst := sameRun(t, "regenerated reply", again, fresh)
				promptLen := first.pre.Tokens
				wantReread := 0
				if every == 1 {
					wantReread = promptLen - 1 // back to the empty state
				}
				if again.pre.Reread != wantReread {
					t.Errorf("regenerate re-read %d tokens, want %d", again.pre.Reread, wantReread)
				}
				t.Logf("%s every %d: regenerate re-read %d tokens in %v; max |Δlogit| vs fresh %.3g",
					name, every, again.pre.Reread, again.pre.RereadDuration, worst)
			})
		}
	}
}

// TestHybridContextOverflowMatchesFresh runs a chat in a small context
// until its replies fill it and old turns are dropped from the prompt:
// every turn, in one session, must give a fresh session's logits however
// little of the cached prefix survives.
func TestHybridContextOverflowMatchesFresh(t *testing.T) {
	for _, hc := range hybridCases(t) {
		be, name := hc.be, hc.name
		t.Run(be+"/"+name, func(t *testing.T) {
			const ctxSize = 192
			s := loadHybrid(t, be, name, ctxSize, "chatml")
			s.checkpointEvery = 8
			msgs := []chat.Message{{Role: chat.RoleSystem, Content: "Tell stories."}}
			dropped, full := 0, false
			for turn, text := range []string{"Once upon a time", "The cat sat", "A big red ball", "Then the sun", "She was happy"} {
				msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: text})
				req := Request{Messages: msgs, MaxTokens: 48}
				got := generateHybrid(t, s, req)
				want := generateHybrid(t, loadHybrid(t, be, name, ctxSize, "chatml"), req)
				worst := sameRun(t, fmt.Sprintf("turn %d", turn), got, want)
				dropped = max(dropped, got.pre.DroppedMessages)
				full = full || got.done.Reason == StopContext
				t.Logf("%s turn %d: %d reused, %d computed (%d re-read), %d messages dropped, stop %s; max |Δlogit| vs fresh %.3g",
					name, turn, got.pre.Reused, got.pre.Tokens, got.pre.Reread, got.pre.DroppedMessages, got.done.Reason, worst)
				var reply strings.Builder
				for _, tk := range got.toks {
					reply.WriteString(tk.Piece)
				}
				msgs = append(msgs, chat.Message{Role: chat.RoleAssistant, Content: reply.String()})
			}
			if dropped == 0 {
				t.Errorf("no turn dropped messages: the test did not overflow the context")
			}
			_ = full
		})
	}
}

// TestHybridStats: the memory figures of a hybrid model count the KV
// cache of its attention layers only, and the recurrent state and the
// checkpoints apart.
func TestHybridStats(t *testing.T) {
	for _, hc := range hybridCases(t) {
		be, name := hc.be, hc.name
		t.Run(be+"/"+name, func(t *testing.T) {
			s := loadHybrid(t, be, name, 256, "none")
			m := s.model
			attn := 0 // the layers with a cache: not the recurrent ones, nor an FFN alone (nemotron_h)
			for i := range m.Layers {
				if m.OwnsKV(i) {
					attn++
				}
			}
			if want := int64(attn) * 2 * int64(m.KVHeads*m.HeadDim*2) * 256; s.be.Memory().KVAllocated != want {
				t.Errorf("KV allocated %d, want %d (%d attention layers)", s.be.Memory().KVAllocated, want, attn)
			}
			generateHybrid(t, s, Request{Messages: userMsg("Once upon a time"), MaxTokens: 4})
			st := s.Stats()
			if st.StateBytes != m.StateBytes() || st.StateBytes == 0 {
				t.Errorf("state %d bytes, the model's layers hold %d", st.StateBytes, m.StateBytes())
			}
			if n := int64(len(st.Checkpoints)); n == 0 || st.CheckpointBytes != n*st.StateBytes {
				t.Errorf("%d checkpoints take %d bytes, want %d each", n, st.CheckpointBytes, st.StateBytes)
			}
			if st.StateFormula == "" || !strings.HasSuffix(st.StateFormula, fmt.Sprintf("= %d B", st.StateBytes)) {
				t.Errorf("state formula %q does not add up to %d B", st.StateFormula, st.StateBytes)
			}
		})
	}
}
