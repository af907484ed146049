package picker

import (
	"errors"
	"strings"
	"testing"

	"vkchat/models/hub"
)

// TestEmbeddedScreens: inside the chat (/model) no screen says how to start
// the chat from a shell or that q quits: q, esc and ctrl+c go back to the
// chat, and the ways on name /model. The screens under
// testdata/TestEmbeddedScreens are regenerated with
//
//	go test ./ui/picker -run TestEmbeddedScreens -update
func TestEmbeddedScreens(t *testing.T) {
	unfit := []string{"to start with", "vkchat chat --model", "make run", "q quit", "ctrl+c quit", "first run", "any other key exit", "then run vkchat chat"}
	check := func(t *testing.T, m *Model, want ...string) {
		t.Helper()
		v := m.View()
		for _, s := range unfit {
			if strings.Contains(v, s) {
				t.Errorf("the screen inside the chat says %q:\n%s", s, v)
			}
		}
		for _, s := range want {
			if !strings.Contains(v, s) {
				t.Errorf("the screen lacks %q:\n%s", s, v)
			}
		}
	}
	embedded := func(o Options) *Model {
		m := newTestModel(t, o)
		m.embed()
		return m
	}

	// An empty store: the offer, worded for switching.
	m := embedded(Options{List: listOf(nil, nil), Demo: true})
	check(t, m, "switch model", "/model FILE.gguf", "esc back to the chat", "press d for the bundled demo model")
	shot(t, m, "offer")
	press(m, "?")
	check(t, m)
	for _, k := range []string{"q", "esc", "ctrl+c"} {
		m := embedded(Options{List: listOf(nil, nil), Demo: true})
		if cmd := press(m, k); !isQuit(cmd) {
			t.Fatalf("%s did not leave the picker", k)
		}
		if _, err := m.Result(); !errors.Is(err, ErrCanceled) {
			t.Errorf("%s: Result() error %v, want ErrCanceled (back to the chat)", k, err)
		}
	}

	// A failed download.
	fp := newFakePull()
	fp.err = &hub.NetworkError{Host: "huggingface.co", Err: errors.New("dial tcp: lookup huggingface.co: no such host")}
	m = embedded(Options{List: listOf(nil, nil), Pull: fp.pull, Demo: true})
	step(t, m, press(m, "enter"))
	check(t, m, "/model FILE.gguf", "any other key back to the chat")
	shot(t, m, "offline")

	// The list, its short and its full help.
	m = embedded(Options{List: listOf(sample(), nil), Demo: true})
	check(t, m, "esc back to the chat")
	press(m, "?")
	check(t, m, "ctrl+c back to the chat")
}
