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
	if m.savePath != filepath.Join(dir, "2026-01-02T03-04-05.json") {
		t.Errorf("save path %q", m.savePath)
	}
	raw, err := os.ReadFile(m.savePath)
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
	m2 := newTestModel(t, eng2, Config{StateDir: state, LoadConversation: m.savePath})
	if m2.loadErr != nil {
		t.Fatal(m2.loadErr)
	}
	if m2.system != "You are terse." || len(m2.turns) != 2 || m2.turns[0].content != "hello" || m2.turns[1].content != m.turns[1].content {
		t.Fatalf("restored system %q, turns %+v", m2.system, m2.turns)
	}
	if m2.params != m.params || eng2.Params() != m.params {
		t.Fatalf("params %+v / engine %+v, want %+v", m2.params, eng2.Params(), m.params)
	}
	// Resuming continues the same file and sends the whole history.
	h2 := newHarness(t, m2)
	h2.size(100, 30)
	h2.say("more")
	if msgs := eng2.lastRequest().Messages; len(msgs) != 4 || msgs[0].Role != chat.RoleSystem {
		t.Fatalf("resumed request %+v", msgs)
	}
	c, err := readConversation(m.savePath, sample.Params{})
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
	if len(m.turns) != 0 {
		t.Fatal("/clear kept turns")
	}
	h.typeText("/load " + copyPath)
	h.key("enter")
	if m.status.err || len(m.turns) != 2 || m.turns[0].content != "keep this" {
		t.Fatalf("after /load: status %+v, turns %d", m.status, len(m.turns))
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
	if !m.status.err || len(m.turns) != 2 {
		t.Fatalf("bad /load: status %+v, %d turns", m.status, len(m.turns))
	}
}

func TestReadConversationRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct{ name, body, want string }{
		{"garbage.json", "not json", "not a conversation file"},
		{"newer.json", `{"version": 9, "messages": []}`, "newer vkchat"},
		{"role.json", `{"version": 1, "messages": [{"role": "tool", "content": "x"}]}`, `unknown role "tool"`},
		{"sys.json", `{"version": 1, "messages": [{"role": "user", "content": "x"}, {"role": "system", "content": "y"}]}`, "only come first"},
	}
	for _, tt := range tests {
		_, err := readConversation(write(tt.name, tt.body), sample.Defaults())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
	}
	// Missing settings keep the current ones.
	c, err := readConversation(write("partial.json", `{"version": 1, "params": {"temperature": 0.1}, "messages": []}`), sample.Defaults())
	if err != nil || c.Params.Temperature != 0.1 || c.Params.TopK != sample.Defaults().TopK {
		t.Errorf("partial params: %v %+v", err, c.Params)
	}
}

func TestWriteConversationIsAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	if err := writeConversation(p, savedConversation{Version: 1, Messages: []chat.Message{{Role: "user", Content: "a"}}}); err != nil {
		t.Fatal(err)
	}
	if err := writeConversation(p, savedConversation{Version: 1, Messages: []chat.Message{{Role: "user", Content: "b"}}}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	c, err := readConversation(p, sample.Params{})
	if err != nil || c.Messages[0].Content != "b" {
		t.Fatalf("%v %+v", err, c)
	}
	// A directory that cannot be written is an error, not a lost chat silently.
	if err := writeConversation(filepath.Join(p, "sub", "x.json"), savedConversation{}); err == nil {
		t.Error("writing under a file succeeded")
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
	if m.saveErr == nil || !strings.Contains(m.View(), "could not save") {
		t.Fatalf("save error not reported: %v", m.saveErr)
	}
	if len(m.turns) != 2 {
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
