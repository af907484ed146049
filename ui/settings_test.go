package ui

import (
	"context"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// TestReplySettingCommands: /max-tokens, /presence, /frequency and /stop
// reach the next request and the sampler, and out-of-range values are
// refused with the range.
func TestReplySettingCommands(t *testing.T) {
	cases := []struct {
		line    string
		check   func(m *Model, req engine.Request, p sample.Params) bool
		wantErr string
	}{
		{"/max-tokens 64", func(m *Model, req engine.Request, _ sample.Params) bool { return req.MaxTokens == 64 }, ""},
		{"/max-tokens 0", func(m *Model, req engine.Request, _ sample.Params) bool { return req.MaxTokens == 0 }, ""},
		{"/max-tokens -1", nil, "out of range"},
		{"/presence 0.5", func(_ *Model, _ engine.Request, p sample.Params) bool { return p.PresencePenalty == 0.5 }, ""},
		{"/frequency -1.5", func(_ *Model, _ engine.Request, p sample.Params) bool { return p.FrequencyPenalty == -1.5 }, ""},
		{"/presence 3", nil, "out of range (-2 to 2)"},
		{"/frequency-penalty nope", nil, "not a number"},
		{"/stop User:", func(_ *Model, req engine.Request, _ sample.Params) bool {
			return len(req.Stop) == 1 && req.Stop[0] == "User:"
		}, ""},
		{`/stop \n\n`, func(_ *Model, req engine.Request, _ sample.Params) bool {
			return len(req.Stop) == 1 && req.Stop[0] == "\n\n"
		}, ""},
	}
	for _, tc := range cases {
		eng := newFakeEngine()
		m := newTestModel(t, eng, Config{MaxTokens: 10})
		h := newHarness(t, m)
		h.typeText(tc.line)
		h.key("enter")
		if tc.wantErr != "" {
			if !m.status.err || !strings.Contains(m.status.text, tc.wantErr) {
				t.Errorf("%s: status %+v, want an error saying %q", tc.line, m.status, tc.wantErr)
			}
			continue
		}
		if m.status.err {
			t.Errorf("%s: %s", tc.line, m.status.text)
			continue
		}
		if !tc.check(m, m.nextRequest(), eng.Params()) {
			t.Errorf("%s: request %+v, params %+v", tc.line, m.nextRequest(), eng.Params())
		}
	}
}

// The stop strings add up one at a time and /stop alone clears them; the
// penalties show in the sampler panel only once set.
func TestStopListAndPenaltyPanel(t *testing.T) {
	m := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	if strings.Contains(m.View(), "presence") {
		t.Error("the panel shows an unset presence penalty")
	}
	for _, l := range []string{"/stop a", "/stop b", "/stop a", "/presence 0.25"} {
		h.typeText(l)
		h.key("enter")
	}
	if got := m.nextRequest().Stop; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("stops %q, want [a b]", got)
	}
	if v := m.View(); !strings.Contains(v, "presence 0.25") {
		t.Errorf("the sampler panel lacks the presence penalty:\n%s", v)
	}
	h.typeText("/stop")
	h.key("enter")
	if got := m.nextRequest().Stop; len(got) != 0 {
		t.Errorf("/stop left %q", got)
	}
}

// TestStopSequenceRealEngine: on stories260K (greedy, llama.cpp's reference
// continuation) a stop string ends the reply, and the reply (what the next
// prompt holds) leaves it out.
func TestStopSequenceRealEngine(t *testing.T) {
	p := sample.Defaults()
	p.Temperature = 0
	s, err := engine.Load(context.Background(), testenv.Model(t, "stories260K.gguf"), engine.Options{Backend: "cpu", ContextSize: 256, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newTestModel(t, s, Config{MaxTokens: 100})
	h := newHarness(t, m)
	h.size(120, 40)
	h.typeText("/stop park")
	h.key("enter")
	h.say("Once upon a time")
	reply := m.conv.Turns()[len(m.conv.Turns())-1]
	// llama.cpp's greedy text: ", there was a little girl named Lily. She
	// loved to play outside in the park. ..."
	if want := ", there was a little girl named Lily. She loved to play outside in the "; reply.Content != want {
		t.Errorf("reply %q, want %q", reply.Content, want)
	}
	if reply.Done == nil || reply.Done.Reason != engine.StopSequence {
		t.Errorf("done %+v", reply.Done)
	}
	if !strings.Contains(m.View(), `stopped at "park"`) {
		t.Errorf("no note:\n%s", m.View())
	}
	// The inspector and a fork can still use every token of it.
	for i := range reply.Steps {
		if _, ok := reply.StepInfo(i); !ok {
			t.Errorf("step %d has no detail", i)
		}
		if _, ok := reply.Prefix(i + 1); !ok {
			t.Errorf("no prefix through step %d", i)
		}
	}
}
