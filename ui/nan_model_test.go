package ui

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
	"vkchat/runtime/gguf"
	"vkchat/runtime/sample"
)

// A model whose weights hold NaN, in the real program with the real
// engine: the reply stops at once with an error naming the problem on
// screen, instead of a stream of tokens drawn from NaN logits. The
// conversation (the message sent) is kept.
func TestNaNModelReplyStopsWithAMessage(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	norm, ok := f.Tensor("output_norm.weight")
	off := f.DataOffset + norm.Offset
	f.Close()
	if !ok {
		t.Fatal("no output_norm.weight")
	}
	binary.LittleEndian.PutUint32(data[off:], math.Float32bits(float32(math.NaN())))
	path := filepath.Join(t.TempDir(), "nan.gguf")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p := sample.Defaults()
	p.Temperature = 0
	s, err := engine.Load(context.Background(), path, engine.Options{Backend: "cpu", ContextSize: 256, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newTestModel(t, s, Config{MaxTokens: 24, StateDir: t.TempDir()})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	t.Cleanup(func() { _ = tm.Quit() })
	tm.Type("Once upon a time")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("output is not finite")) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
	turns := final.conv.Turns()
	if len(turns) == 0 || turns[0].Content != "Once upon a time" {
		t.Fatalf("the conversation was not kept: %+v", turns)
	}
	if last := turns[len(turns)-1]; last.Role == "assistant" && len(last.Steps) > 0 {
		t.Errorf("%d tokens drawn from NaN logits: %q", len(last.Steps), last.Content)
	}
}
