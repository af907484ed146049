package ui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"vkchat/models/store"
	"vkchat/ui/picker"
)

// closingEngine is a fake engine that records being closed.
type closingEngine struct {
	*fakeEngine
	closed int
}

func (c *closingEngine) Close() error { c.closed++; return nil }

// TestModelCommand: /model FILE moves the chat to another model: the
// conversation stays and the next reply is asked of the new model (its
// template renders it), the sampler settings carry over, the old model is
// closed; a model that fails to load leaves the chat as it was; /model
// alone opens the picker over the chat.
func TestModelCommand(t *testing.T) {
	first := &closingEngine{fakeEngine: newFakeEngine()}
	second := &closingEngine{fakeEngine: newFakeEngine()}
	second.info.Name, second.info.TemplateName, second.info.Path = "other-model", "llama3", "/models/other.gguf"
	var opened []string
	cfg := Config{OpenModel: func(_ context.Context, ref string) (Engine, error) {
		opened = append(opened, ref)
		if ref == "broken.gguf" {
			return nil, errors.New("tensor \"output.weight\": bad shape")
		}
		return second, nil
	}, Picker: picker.Options{List: func() ([]store.Model, error) {
		return []store.Model{{Name: "other", Path: "/models/other.gguf", Arch: "llama", Size: 1 << 20}}, nil
	}}}
	m := newTestModel(t, first, cfg)
	h := newHarness(t, m)
	h.size(120, 40)
	h.say("hello")
	h.typeText("/temp 0.3")
	h.key("enter")

	h.typeText("/model broken.gguf")
	h.key("enter")
	h.waitFor("the failed load", func() bool { return m.sw.Loading == "" })
	if m.eng != first || !m.status.err || !strings.Contains(m.status.text, "bad shape") || !strings.Contains(m.status.text, "still chatting with tiny-test") {
		t.Fatalf("after a failed load: status %+v", m.status)
	}

	h.typeText("/model other.gguf")
	h.key("enter")
	h.waitFor("the new model", func() bool { return m.eng == Engine(second) })
	if first.closed != 1 {
		t.Errorf("the old model was closed %d times, want 1", first.closed)
	}
	if !strings.Contains(m.View(), "other-model") || !strings.Contains(m.status.text, "template llama3") {
		t.Errorf("the screen does not name the new model:\n%s", m.View())
	}
	if second.Params().Temperature != 0.3 {
		t.Errorf("the sampler settings did not carry over: %+v", second.Params())
	}
	h.say("again")
	if len(second.requests) != 1 || len(second.requests[0].Messages) != 3 || second.requests[0].Messages[0].Content != "hello" {
		t.Errorf("the new model was asked %+v, want the whole conversation", second.requests)
	}

	// /model alone: the picker, over the chat; enter picks.
	h.typeText("/model")
	h.key("enter")
	h.waitFor("the picker's list", func() bool { return strings.Contains(m.View(), "other") && m.sw.Picker != nil })
	h.key("enter")
	h.waitFor("the picked model", func() bool { return m.sw.Picker == nil && m.sw.Loading == "" })
	if opened[len(opened)-1] != "/models/other.gguf" {
		t.Errorf("opened %q", opened)
	}
	if n := len(m.conv.Turns()); n != 4 {
		t.Errorf("%d turns after switching twice, want 4", n)
	}
}
