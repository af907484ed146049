package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"vkchat/runtime/engine"
)

// switchingEngine is a fake engine that can change backends.
type switchingEngine struct {
	*fakeEngine
	switched []string
	fail     error
}

func (s *switchingEngine) SwitchBackend(name string) error {
	if s.fail != nil {
		return s.fail
	}
	s.switched = append(s.switched, name)
	s.mu.Lock()
	s.info.Backend, s.info.Device = name, "CPU (2 threads)"
	s.mu.Unlock()
	return nil
}

func TestDeviceLostOffersCPUAndSwitches(t *testing.T) {
	eng := &switchingEngine{fakeEngine: newFakeEngine()}
	eng.doneErr = fmt.Errorf("vkQueueSubmit: VK_ERROR_DEVICE_LOST: %w", engine.ErrDeviceLost)
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.say("hello")
	if view := m.View(); !strings.Contains(view, "/backend cpu") {
		t.Fatalf("device loss does not offer the CPU:\n%s", view)
	}
	partial := m.conv.Turns()[1].Content
	if partial == "" {
		t.Fatal("the partial reply was lost")
	}
	eng.doneErr = nil
	h.say("/backend cpu")
	if len(eng.switched) != 1 || eng.switched[0] != "cpu" {
		t.Fatalf("SwitchBackend calls %v, want [cpu]", eng.switched)
	}
	if m.info.Backend != "cpu" || !strings.Contains(m.View(), "now running on cpu") {
		t.Errorf("backend %q after the switch; screen:\n%s", m.info.Backend, m.View())
	}
	if m.conv.Turns()[1].Content != partial {
		t.Error("switching backends changed the conversation")
	}
	h.say("again")
	if n := len(m.conv.Turns()); n != 4 {
		t.Errorf("%d turns after continuing on the CPU, want 4", n)
	}
}

func TestBackendCommandErrors(t *testing.T) {
	plain := newTestModel(t, newFakeEngine(), Config{})
	h := newHarness(t, plain)
	h.size(100, 30)
	h.say("/backend cpu")
	if !strings.Contains(plain.View(), "cannot change backends") {
		t.Errorf("an engine without SwitchBackend must say so:\n%s", plain.View())
	}
	eng := &switchingEngine{fakeEngine: newFakeEngine(), fail: errors.New(`unknown backend "tpu" (choose cpu or vulkan)`)}
	m := newTestModel(t, eng, Config{})
	h = newHarness(t, m)
	h.size(100, 30)
	h.say("/backend tpu")
	if !strings.Contains(m.View(), "unknown backend") {
		t.Errorf("a failed switch must show its error:\n%s", m.View())
	}
}
