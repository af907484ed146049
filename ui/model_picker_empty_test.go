package ui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"vkchat/models/store"
	"vkchat/ui/picker"
)

// TestModelPickerEmptyStore: /model with no stored models shows a page for
// switching inside the chat (/model FILE, esc back to the chat), not the
// first run's command lines and "q quit"; q goes back to the chat.
func TestModelPickerEmptyStore(t *testing.T) {
	cfg := Config{
		OpenModel: func(context.Context, string) (Engine, error) { return nil, errors.New("not in this test") },
		Picker: picker.Options{Demo: true, StoreDir: "/nowhere/models",
			List: func() ([]store.Model, error) { return nil, nil }},
	}
	m := newTestModel(t, newFakeEngine(), cfg)
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("hello")
	h.typeText("/model")
	h.key("enter")
	h.waitFor("the picker's page", func() bool { return m.sw.Picker != nil && strings.Contains(m.View(), "No models in") })
	v := m.View()
	for _, bad := range []string{"vkchat chat --model", "q quit", "first run"} {
		if strings.Contains(v, bad) {
			t.Errorf("the page says %q:\n%s", bad, v)
		}
	}
	for _, want := range []string{"/model FILE.gguf", "back to the chat"} {
		if !strings.Contains(v, want) {
			t.Errorf("the page lacks %q:\n%s", want, v)
		}
	}
	h.key("q")
	if m.sw.Picker != nil || !strings.Contains(m.status.text, "still chatting with tiny-test") || len(m.conv.Turns()) != 2 {
		t.Fatalf("q did not go back to the chat: picker %v, status %q", m.sw.Picker != nil, m.status.text)
	}
}
