package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
	"vkchat/ui/panels"
)

// TestRealEngineEndToEnd drives the real program with the real engine on
// stories260K: the streamed text must be llama.cpp's greedy continuation,
// the speed panel must show a nonzero rate, and the KV bytes must be the
// formula's.
func TestRealEngineEndToEnd(t *testing.T) {
	p := sample.Defaults()
	p.Temperature = 0
	s, err := engine.Load(context.Background(), testenv.Model(t, "stories260K.gguf"), engine.Options{Backend: "cpu", ContextSize: 256, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ref struct {
		Text string `json:"text"`
	}
	data, err := os.ReadFile(testenv.Shared(t, "reference/stories260K.p1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}

	m := newTestModel(t, s, Config{MaxTokens: 24})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	t.Cleanup(func() { _ = tm.Quit() })
	tm.Type("Once upon a time")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("24-token limit")) },
		teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)

	reply := final.conv.Turns()[len(final.conv.Turns())-1].Content
	if reply == "" || !strings.HasPrefix(ref.Text, reply) {
		t.Errorf("streamed %q, want a prefix of llama.cpp's %q", reply, ref.Text)
	}
	if rate := final.run.Metrics(0, 0, 0, 0).Avg; !(rate > 0) {
		t.Errorf("decode rate %v tok/s, want > 0", rate)
	}
	st, info := s.Stats(), s.Info()
	perToken := int64(info.Layers * 2 * info.KVHeads * info.HeadDim * 2)
	if st.KVUsed != int64(st.ContextUsed)*perToken || st.KVAllocated != int64(info.ContextSize)*perToken || st.ContextUsed == 0 {
		t.Errorf("KV stats %+v, want %d bytes per position", st, perToken)
	}
	view := final.View()
	if want := panels.ExactBytes(st.KVAllocated); !strings.Contains(view, want) {
		t.Errorf("the memory panel does not show the allocated KV bytes %q:\n%s", want, view)
	}
}
