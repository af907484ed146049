package trace

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/scriptmodel"
	"vkchat/internal/testenv"
	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

func greedy() sample.Params { p := sample.Defaults(); p.Temperature = 0; return p }

func userMsg(text string) []chat.Message { return []chat.Message{{Role: chat.RoleUser, Content: text}} }

func loadSession(t testing.TB, model string) *engine.Session {
	t.Helper()
	s, err := engine.Load(context.Background(), testenv.Model(t, model), engine.Options{Backend: "cpu", ContextSize: 512, Template: "none"})
	if err != nil {
		t.Fatalf("load %s: %v", model, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestReplayFollowsSettingChanges: settings changed while a reply is
// generated (as the chat's keys do) are recorded on the token they first
// apply to, and a replay applies them at the same token and reproduces the
// reply bit for bit; without them the replay finds the difference.
func TestReplayFollowsSettingChanges(t *testing.T) {
	ctx := context.Background()
	s := loadSession(t, "stories260K.gguf")
	p := greedy()
	p.Temperature, p.Seed = 0.9, 3
	s.SetParams(p)
	req := engine.Request{Messages: userMsg("Once upon a time"), MaxTokens: 50}
	h, err := NewHeader(s, req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h, s.TokenText)
	if err != nil {
		t.Fatal(err)
	}
	hot := p
	hot.Temperature, hot.TopK, hot.Seed = 1.6, 0, 99
	err = s.Generate(ctx, req, func(ev engine.Event) {
		if ev.Kind != engine.EventToken {
			return
		}
		if err := w.Token(*ev.Token); err != nil {
			t.Fatal(err)
		}
		switch ev.Token.Index {
		case 9:
			s.SetParams(hot) // from token 10 on
		case 29:
			s.SetParams(p) // back, from token 30 on
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h2, toks, err := Read(bytes.NewReader(buf.Bytes()), "export")
	if err != nil {
		t.Fatal(err)
	}
	for i, tk := range toks {
		if changed := tk.Params != nil; changed != (i == 10 || i == 30) {
			t.Errorf("token %d: params recorded %v", i, changed)
		}
	}
	if toks[10].Params.Temperature != 1.6 || toks[30].Params.Temperature != 0.9 {
		t.Fatalf("recorded settings %+v, %+v", toks[10].Params, toks[30].Params)
	}

	fresh := loadSession(t, "stories260K.gguf")
	if res, err := Replay(ctx, fresh, h2, toks); err != nil || res.Checked != 50 {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	for i := range toks {
		toks[i].Params = nil
	}
	again := loadSession(t, "stories260K.gguf")
	var mm *Mismatch
	if _, err := Replay(ctx, again, h2, toks); !errors.As(err, &mm) || mm.Index < 10 {
		t.Fatalf("replay without the recorded changes: %v, want a mismatch from token 10 on", err)
	}
}

// TestReplayDisableThinking: a reply made with enable_thinking=false (the
// template pre-fills an empty block, so the script answers at once) records
// it, and the replay renders the prompt the same way; with the flag dropped
// the replay writes the reasoning instead and fails at the first token.
func TestReplayDisableThinking(t *testing.T) {
	ctx := context.Background()
	m, err := scriptmodel.WriteQwen3Thinker(testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf"),
		filepath.Join(t.TempDir(), "qwen3-script.gguf"), "qwen3")
	if err != nil {
		t.Fatal(err)
	}
	load := func() *engine.Session {
		s, err := engine.Load(ctx, m.Path, engine.Options{Backend: "cpu", ContextSize: 256, Params: greedy()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := load()
	// Qwen3's template does not read reasoning_effort; the header keeps
	// it all the same, so a replay renders with what the reply had.
	req := engine.Request{Messages: userMsg("hello"), DisableThinking: true, ReasoningEffort: "high"}
	h, err := NewHeader(s, req)
	if err != nil {
		t.Fatal(err)
	}
	if !h.DisableThinking || h.ReasoningEffort != "high" || h.Template != "gguf" || len(h.Messages) != 1 {
		t.Fatalf("header %+v", h)
	}
	h2, toks := exportReply(t, s, h, req)
	if len(toks) == 0 || toks[0].ID != m.IDs["Hi"] {
		t.Fatalf("reply starts with %v, want the script's answer without reasoning", toks)
	}
	if _, err := Replay(ctx, load(), h2, toks); err != nil {
		t.Fatalf("replay: %v", err)
	}
	h2.DisableThinking = false
	var mm *Mismatch
	if _, err := Replay(ctx, load(), h2, toks); !errors.As(err, &mm) || mm.Index != 0 {
		t.Fatalf("replay with thinking on: %v, want a mismatch at token 0", err)
	}
}

// A mixture-of-experts reply records, per token and layer, the experts and
// weights of the pass its distribution came from; the replay reproduces
// them, and a recorded expert the replay does not reproduce is named with
// its layer even though the token and its logprob are the same.
func TestReplayChecksExperts(t *testing.T) {
	ctx := context.Background()
	load := func() *engine.Session {
		s, err := engine.Load(ctx, testenv.Model(t, "2026/synth-qwen3moe-F32.gguf"), engine.Options{Backend: "cpu", ContextSize: 256, Template: "none", Params: greedy()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := load()
	req := engine.Request{Messages: userMsg("Once upon a time"), MaxTokens: 12}
	h, err := NewHeader(s, req)
	if err != nil {
		t.Fatal(err)
	}
	h2, toks := exportReply(t, s, h, req)
	if len(toks) != 12 {
		t.Fatalf("%d tokens", len(toks))
	}
	for _, tk := range toks {
		if len(tk.Experts) != 2 {
			t.Fatalf("token %d: routing of %d layers, want 2", tk.Index, len(tk.Experts))
		}
		for l, r := range tk.Experts {
			var sum float32
			for _, w := range r.Weights {
				sum += w
			}
			if len(r.IDs) != 2 || r.IDs[0] == r.IDs[1] || r.IDs[0] < 0 || r.IDs[0] > 7 || sum < 0.999 || sum > 1.001 || r.Weights[0] < r.Weights[1] {
				t.Fatalf("token %d layer %d: experts %v weights %v", tk.Index, l, r.IDs, r.Weights)
			}
		}
	}
	if res, err := Replay(ctx, load(), h2, toks); err != nil || res.Checked != 12 {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	toks[5].Experts[1].IDs[0] = (toks[5].Experts[1].IDs[0] + 1) % 8
	var mm *Mismatch
	if _, err := Replay(ctx, load(), h2, toks); !errors.As(err, &mm) || mm.Index != 5 || mm.Layer != 1 {
		t.Fatalf("replay with a changed expert: %v, want a mismatch at token 5, layer 1", err)
	}
}

// exportReply generates req on s, writing it as an export with header h,
// and reads the export back.
func exportReply(t *testing.T, s *engine.Session, h Header, req engine.Request) (Header, []Token) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h, s.TokenText)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Generate(context.Background(), req, func(ev engine.Event) {
		if ev.Kind == engine.EventToken {
			w.Token(*ev.Token)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h2, toks, err := Read(bytes.NewReader(buf.Bytes()), "export")
	if err != nil {
		t.Fatal(err)
	}
	return h2, toks
}

// TestExportCarriesDraftFate: a reply generated with speculation (a draft
// model identical to the target, and n-gram lookup) exports each token's
// fate as the engine reported it, the rejected draft of a corrected one,
// and replays without speculation to the same tokens.
func TestExportCarriesDraftFate(t *testing.T) {
	ctx := context.Background()
	model := testenv.Model(t, "stories260K.gguf")
	for _, o := range []engine.SpecOptions{{Mode: engine.SpecDraft, Draft: model}, {Mode: engine.SpecNgram}} {
		s, err := engine.Load(ctx, model, engine.Options{Backend: "cpu", ContextSize: 512, Template: "none", Spec: o})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.SetParams(greedy())
		req := engine.Request{Messages: userMsg("the the the cat sat on the mat and the"), MaxTokens: 48}
		h, err := NewHeader(s, req)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, h, s.TokenText)
		if err != nil {
			t.Fatal(err)
		}
		var marks []*engine.SpecMark
		err = s.Generate(ctx, req, func(ev engine.Event) {
			if ev.Kind == engine.EventToken {
				marks = append(marks, ev.Token.Spec)
				if err := w.Token(*ev.Token); err != nil {
					t.Fatal(err)
				}
			}
		})
		if err != nil || w.Flush() != nil {
			t.Fatal(err)
		}
		h2, toks, err := Read(bytes.NewReader(buf.Bytes()), "export")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for i, tk := range toks {
			m := marks[i]
			switch {
			case m == nil && tk.Spec != nil, m != nil && tk.Spec == nil:
				t.Fatalf("%s token %d: exported %+v, engine said %+v", o.Mode, i, tk.Spec, m)
			case m == nil:
				continue
			}
			seen[tk.Spec.Fate]++
			if tk.Spec.Fate != string(m.Fate) || tk.Spec.Source != string(o.Mode) {
				t.Errorf("%s token %d: exported %+v, engine said %+v", o.Mode, i, tk.Spec, m)
			}
			if (tk.Spec.DraftID == nil) != (m.Fate == engine.FateBonus) || (tk.Spec.DraftID != nil && *tk.Spec.DraftID != m.Draft) {
				t.Errorf("%s token %d: exported draft %v, engine's %d (%s)", o.Mode, i, tk.Spec.DraftID, m.Draft, m.Fate)
			}
			if m.Fate == engine.FateAccepted && *tk.Spec.DraftID != tk.ID || m.Fate == engine.FateCorrected && *tk.Spec.DraftID == tk.ID {
				t.Errorf("%s token %d: id %d, draft %d, fate %s", o.Mode, i, tk.ID, *tk.Spec.DraftID, m.Fate)
			}
		}
		if seen["accepted"] == 0 {
			t.Errorf("%s: fates %v, want accepted drafts", o.Mode, seen)
		}
		fresh := loadSession(t, "stories260K.gguf")
		if res, err := Replay(ctx, fresh, h2, toks); err != nil || res.Checked != len(toks) {
			t.Fatalf("%s: replay without speculation: %+v, %v", o.Mode, res, err)
		}
	}
}

// TestReadLensLines: an export's lens lines (the chat's /export --lens)
// are read past, each checked: its index must name a token above it, and
// a line that does not parse is refused naming the line. NaN in a lens is
// refused when written.
func TestReadLensLines(t *testing.T) {
	write := func(lens ...Lens) string {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Model: "m.gguf"}, func(int32) string { return "x" })
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := w.Token(engine.TokenInfo{Index: i, ID: int32(i)}); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range lens {
			if err := w.Lens(l.Index, l.LensPosition); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
		return buf.String()
	}
	pos := engine.LensPosition{Pos: 7, Token: 3, Layers: []engine.LensLayer{{Layer: 0, Top: [][3]float64{{3, 1.5, 0.25}}}}}
	_, toks, err := Read(strings.NewReader(write(Lens{Index: 1, LensPosition: pos})), "a.jsonl")
	if err != nil || len(toks) != 2 {
		t.Fatalf("an export with a lens line: %d tokens, %v", len(toks), err)
	}
	_, _, err = Read(strings.NewReader(write(Lens{Index: 2, LensPosition: pos})), "b.jsonl")
	if err == nil || !strings.Contains(err.Error(), `b.jsonl: line 4: field "index" is 2`) {
		t.Errorf("a lens of a token not in the file: %v", err)
	}
	bad := strings.Replace(write(Lens{Index: 0, LensPosition: pos}), `"layers":[`, `"layers":{`, 1)
	if _, _, err := Read(strings.NewReader(bad), "c.jsonl"); err == nil || !strings.Contains(err.Error(), "c.jsonl: line 4") {
		t.Errorf("a lens line that does not parse: %v", err)
	}
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{Model: "m.gguf"}, func(int32) string { return "x" })
	pos.Layers[0].Top[0][2] = math.NaN()
	if err := w.Lens(0, pos); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("a NaN in a lens: %v", err)
	}
}
