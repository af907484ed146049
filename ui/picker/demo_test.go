package picker

import (
	"errors"
	"strings"
	"testing"

	"vkchat/models/demo"
	"vkchat/models/hub"
)

// The demo model is one key away on every screen that could otherwise be
// a dead end: the first-run offer, a failed download and the list.
func TestDemoKey(t *testing.T) {
	netErr := &hub.NetworkError{Host: "huggingface.co", Err: errors.New("connection refused")}
	cases := []struct {
		name  string
		setup func(t *testing.T, m *Model)
		opts  func(o *Options)
	}{
		{name: "offer", opts: func(o *Options) { o.List = listOf(nil, nil) }},
		{name: "failed download", opts: func(o *Options) {
			fp := newFakePull()
			fp.err = netErr
			o.List, o.Pull = listOf(nil, nil), fp.pull
		}, setup: func(t *testing.T, m *Model) {
			step(t, m, press(m, "enter"))
			if m.screen != screenFailed {
				t.Fatalf("screen %d, want failed", m.screen)
			}
		}},
		{name: "list", opts: func(o *Options) { o.List = listOf(sample(), nil) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Demo: true}
			c.opts(&o)
			m := newTestModel(t, o)
			if c.setup != nil {
				c.setup(t, m)
			}
			if c.name != "list" && !strings.Contains(m.View(), "press d for the bundled demo model") {
				t.Errorf("the screen does not offer the demo:\n%s", m.View())
			}
			if cmd := press(m, "d"); !isQuit(cmd) {
				t.Fatal("d did not end the picker")
			}
			if path, err := m.Result(); path != demo.Ref || err != nil {
				t.Errorf("Result() = %q, %v; want %q, nil", path, err, demo.Ref)
			}
		})
	}
}

// Without Options.Demo the key does nothing on the offer and the screen
// does not mention a demo.
func TestDemoKeyOff(t *testing.T) {
	m := newTestModel(t, Options{List: listOf(nil, nil)})
	if cmd := press(m, "d"); cmd != nil && isQuit(cmd) {
		t.Error("d ended the picker with no demo offered")
	}
	if m.screen != screenOffer || strings.Contains(m.View(), "demo") {
		t.Errorf("screen %d mentions a demo it does not offer:\n%s", m.screen, m.View())
	}
}

// The screens under testdata/TestDemoGoldens are regenerated with
//
//	go test ./ui/picker -run TestDemoGoldens -update
func TestDemoGoldens(t *testing.T) {
	m := newTestModel(t, Options{List: listOf(nil, nil), Demo: true})
	shot(t, m, "offer")
	fp := newFakePull()
	fp.err = &hub.NetworkError{Host: "huggingface.co", Err: errors.New("dial tcp: lookup huggingface.co: no such host")}
	m = newTestModel(t, Options{List: listOf(nil, nil), Pull: fp.pull, Demo: true})
	step(t, m, press(m, "enter"))
	shot(t, m, "offline")
}
