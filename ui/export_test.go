package ui

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
	"vkchat/runtime/engine/trace"
	"vkchat/runtime/sample"
)

// TestExportReplaysExactly: on the real engine, with sampling on, the
// second reply of a chat and then a fork of it are exported with /export;
// a fresh session loaded as the header says reproduces every token and
// log-probability bit for bit (the sampler state was recorded as each reply
// began, and the fork continues from its recorded prefix).
func TestExportReplaysExactly(t *testing.T) {
	// Plain completion (the model has no template) records the prompt; a
	// chat template records the messages and the template's name.
	for _, tmpl := range []string{"", "chatml"} {
		t.Run("template="+tmpl, func(t *testing.T) { testExportReplays(t, tmpl) })
	}
}

func testExportReplays(t *testing.T, tmpl string) {
	model := testenv.Model(t, "stories260K.gguf")
	p := sample.Defaults()
	p.Temperature, p.Seed = 1.0, 42
	s, err := engine.Load(context.Background(), model, engine.Options{Backend: "cpu", ContextSize: 256, Params: p, Template: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newTestModel(t, s, Config{MaxTokens: 30})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("Once upon a time")
	h.say(" The dog")
	dir := t.TempDir()

	check := func(path string, wantForked bool) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		hdr, toks, err := trace.Read(f, path)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Model != model || hdr.Backend != "cpu" || hdr.Params.Temperature != 1 || hdr.Params.Seed != 42 || len(hdr.SamplerState) == 0 {
			t.Fatalf("header %+v", hdr)
		}
		if chatMode := tmpl != ""; chatMode != (hdr.Template == tmpl && len(hdr.Messages) == 3 && hdr.Prompt == "") {
			t.Fatalf("template %q: header template %q, %d messages, prompt %q", tmpl, hdr.Template, len(hdr.Messages), hdr.Prompt)
		}
		forked := false
		for _, tk := range toks {
			forked = forked || tk.Forced
			if len(tk.Top) < 10 {
				t.Fatalf("token %d has %d alternatives", tk.Index, len(tk.Top))
			}
		}
		if forked != wantForked {
			t.Fatalf("forced token in export: %v, want %v", forked, wantForked)
		}
		fresh, err := engine.Load(context.Background(), model, engine.Options{Backend: hdr.Backend, ContextSize: hdr.Context,
			Params: hdr.Params.Sample(), Template: hdr.Template})
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		res, err := trace.Replay(context.Background(), fresh, hdr, toks)
		if err != nil {
			t.Fatalf("replay of %s: %v", filepath.Base(path), err)
		}
		if res.Checked+res.Given != len(toks) || res.Checked == 0 {
			t.Fatalf("replay checked %d and took %d as given of %d", res.Checked, res.Given, len(toks))
		}
	}

	plain := filepath.Join(dir, "reply.jsonl")
	h.typeText("/export " + plain)
	h.key("enter")
	if m.status.err {
		t.Fatalf("/export: %s", m.status.text)
	}
	check(plain, false)

	// Lower the temperature, then fork the second reply at its fifth token
	// with another candidate: the fork is drawn with the new setting.
	h.key("alt+t")
	h.key("tab", "home", "right", "right", "right", "right", "down")
	if m.insp.Cand() == 0 {
		h.key("down")
	}
	h.key("enter")
	h.idle()
	forked := filepath.Join(dir, "fork.jsonl")
	h.typeText("/export " + forked)
	h.key("enter")
	if m.status.err || !strings.Contains(m.status.text, "exported") {
		t.Fatalf("/export after the fork: %q", m.status.text)
	}
	check(forked, true)
	raw, err := os.ReadFile(forked)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"params":{"temperature":0.9`) {
		t.Errorf("the fork's export does not record the lowered temperature")
	}
}

// TestExportNeedsAReply: /export before any reply says so.
func TestExportNeedsAReply(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, m)
	h.size(100, 30)
	h.typeText("/export " + filepath.Join(t.TempDir(), "x.jsonl"))
	h.key("enter")
	if !m.status.err || !strings.Contains(m.status.text, "nothing to export") {
		t.Fatalf("status %q", m.status.text)
	}
}

// TestExportLens: /export --lens writes, after the tokens, the logit lens
// of each token whose lens was read in the inspector (l), in the shape of
// vkchat eval --lens --json's positions, keyed by the token's index; the
// last layer's lens is the model's own distribution, so its top candidate
// and probability agree with the token line's top alternative. Without a
// lens read, --lens refuses and writes nothing; replay reads past the
// lens lines.
func TestExportLens(t *testing.T) {
	model := testenv.Model(t, "stories260K.gguf")
	s, err := engine.Load(context.Background(), model, engine.Options{Backend: "cpu", ContextSize: 256, Params: sample.Defaults()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newTestModel(t, s, Config{MaxTokens: 12})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("Once upon a time")
	dir := t.TempDir()

	none := filepath.Join(dir, "none.jsonl")
	h.typeText("/export --lens " + none)
	h.key("enter")
	if !m.status.err || !strings.Contains(m.status.text, "no token of this reply has its logit lens read") {
		t.Fatalf("--lens with no lens read: status %q", m.status.text)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Fatalf("--lens with no lens read wrote %s (%v)", none, err)
	}

	reply := m.conv.Last()
	h.key("tab", "left", "l")
	h.waitFor("the lens", func() bool { return lensShown(m) })
	h.key("left")
	h.waitFor("a second lens", func() bool { return lensShown(m) })
	want := []int{len(reply.Steps) - 3, len(reply.Steps) - 2}
	h.key("esc")
	path := filepath.Join(dir, "lens.jsonl")
	h.typeText("/export --lens " + path)
	h.key("enter")
	if m.status.err || !strings.Contains(m.status.text, "and the lens of 2") {
		t.Fatalf("/export --lens: %q", m.status.text)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, toks, err := trace.Read(f, path)
	f.Close()
	if err != nil || len(toks) != len(reply.Steps) {
		t.Fatalf("read back: %d tokens, %v", len(toks), err)
	}
	raw, _ := os.ReadFile(path)
	var got []int
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if !strings.Contains(line, `"type":"lens"`) {
			continue
		}
		var l trace.Lens
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		got = append(got, l.Index)
		if len(l.Layers) != s.Info().Layers {
			t.Fatalf("token %d: %d layers, the model has %d", l.Index, len(l.Layers), s.Info().Layers)
		}
		for _, ly := range l.Layers {
			if len(ly.Top) != 10 {
				t.Fatalf("token %d layer %d: %d candidates, want 10", l.Index, ly.Layer, len(ly.Top))
			}
		}
		last, alt := l.Layers[len(l.Layers)-1].Top[0], toks[l.Index].Top[0]
		if int32(last[0]) != alt.ID || math.Abs(math.Log(last[2])-alt.Logprob) > 1e-4 {
			t.Errorf("token %d: the last layer's lens top is %v, the token's top alternative %d at logprob %.5f", l.Index, last, alt.ID, alt.Logprob)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("lens lines for tokens %v, want the two inspected %v", got, want)
	}
}
