package ui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	state := t.TempDir()
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{StateDir: state, SystemPrompt: "You are terse."})
	h := newHarness(t, m)
	h.size(100, 30)
	h.typeText("/temp 0.3")
	h.key("enter")
	h.typeText("/top-k 7")
	h.key("enter")
	h.say("hello")

	// Saved under the state dir as it went, with nothing half-written left.
	dir := filepath.Join(state, "conversations")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("state dir: %v, %v", entries, err)
	}
	if m.conv.Path() != filepath.Join(dir, "2026-01-02T03-04-05.json") {
		t.Errorf("save path %q", m.conv.Path())
	}
	raw, err := os.ReadFile(m.conv.Path())
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if file["model"] != "/models/tiny-test.Q4_0.gguf" || file["version"] != 1.0 {
		t.Errorf("file header %v %v", file["model"], file["version"])
	}
	if p := file["params"].(map[string]any); p["temperature"].(float64) < 0.29 || p["top_k"] != 7.0 {
		t.Errorf("params in file %v", p)
	}

	eng2 := newFakeEngine()
	m2 := newTestModel(t, eng2, Config{StateDir: state, LoadConversation: m.conv.Path()})
	if m2.loadErr != nil {
		t.Fatal(m2.loadErr)
	}
	if m2.conv.System() != "You are terse." || len(m2.conv.Turns()) != 2 || m2.conv.Turns()[0].Content != "hello" || m2.conv.Turns()[1].Content != m.conv.Turns()[1].Content {
		t.Fatalf("restored system %q, turns %+v", m2.conv.System(), m2.conv.Turns())
	}
	if m2.smp.Params != m.smp.Params || eng2.Params() != m.smp.Params {
		t.Fatalf("params %+v / engine %+v, want %+v", m2.smp.Params, eng2.Params(), m.smp.Params)
	}
	// Resuming continues the same file and sends the whole history.
	h2 := newHarness(t, m2)
	h2.size(100, 30)
	h2.say("more")
	if msgs := eng2.lastRequest().Messages; len(msgs) != 4 || msgs[0].Role != chat.RoleSystem {
		t.Fatalf("resumed request %+v", msgs)
	}
	c, err := conversation.Read(m.conv.Path(), sample.Params{})
	if err != nil || len(c.Messages) != 5 {
		t.Fatalf("resumed file: %v, %d messages", err, len(c.Messages))
	}
}

func TestSaveAndLoadCommands(t *testing.T) {
	state := t.TempDir()
	m := newTestModel(t, newFakeEngine(), Config{StateDir: state})
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("keep this")
	copyPath := filepath.Join(t.TempDir(), "copy.json")
	h.typeText("/save " + copyPath)
	h.key("enter")
	if m.status.err || !strings.Contains(m.status.text, "saved a copy") {
		t.Fatalf("status %+v", m.status)
	}
	h.typeText("/clear")
	h.key("enter")
	if len(m.conv.Turns()) != 0 {
		t.Fatal("/clear kept turns")
	}
	h.typeText("/load " + copyPath)
	h.key("enter")
	if m.status.err || len(m.conv.Turns()) != 2 || m.conv.Turns()[0].Content != "keep this" {
		t.Fatalf("after /load: status %+v, turns %d", m.status, len(m.conv.Turns()))
	}
	// A name in the state dir loads without its folder or extension.
	name := strings.TrimSuffix(filepath.Base(m.cfg.conversationsDir()+"/2026-01-02T03-04-05.json"), ".json")
	h.typeText("/load " + name)
	h.key("enter")
	if m.status.err {
		t.Fatalf("/load by name: %+v", m.status)
	}
	h.typeText("/load /no/such/file.json")
	h.key("enter")
	if !m.status.err || len(m.conv.Turns()) != 2 {
		t.Fatalf("bad /load: status %+v, %d turns", m.status, len(m.conv.Turns()))
	}
}

func TestSaveFailureIsShown(t *testing.T) {
	state := t.TempDir()
	// A file where the conversations folder should be.
	if err := os.WriteFile(filepath.Join(state, "conversations"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t, newFakeEngine(), Config{StateDir: state})
	h := newHarness(t, m)
	h.size(100, 30)
	h.say("hello")
	if m.saver.Err() == nil || !strings.Contains(m.View(), "could not save") {
		t.Fatalf("save error not reported: %v", m.saver.Err())
	}
	if len(m.conv.Turns()) != 2 {
		t.Fatal("a failed save lost the conversation")
	}
}

func TestRunRefusesABadConversation(t *testing.T) {
	err := Run(context.Background(), newFakeEngine(), Config{StateDir: t.TempDir(), LoadConversation: filepath.Join(t.TempDir(), "missing.json")})
	if err == nil || !strings.Contains(err.Error(), "load conversation") {
		t.Fatalf("Run = %v", err)
	}
	if err := Run(context.Background(), nil, Config{}); err == nil {
		t.Fatal("Run accepted a nil engine")
	}
}

func TestDefaultStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	if got := DefaultStateDir(); got != "/xdg/state/vkchat" {
		t.Errorf("with XDG_STATE_HOME: %q", got)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/u")
	if got := DefaultStateDir(); got != "/home/u/.local/state/vkchat" {
		t.Errorf("fallback: %q", got)
	}
	if got := (Config{}).conversationsDir(); got != "/home/u/.local/state/vkchat/conversations" {
		t.Errorf("conversations dir %q", got)
	}
}
