package conversation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
)

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
		_, err := Read(write(tt.name, tt.body), sample.Defaults())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
	}
	// Missing settings keep the current ones.
	c, err := Read(write("partial.json", `{"version": 1, "params": {"temperature": 0.1}, "messages": []}`), sample.Defaults())
	if err != nil || c.Params.Temperature != 0.1 || c.Params.TopK != sample.Defaults().TopK {
		t.Errorf("partial params: %v %+v", err, c.Params)
	}
}

func TestWriteConversationIsAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	if err := Write(p, File{Version: 1, Messages: []chat.Message{{Role: "user", Content: "a"}}}); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, File{Version: 1, Messages: []chat.Message{{Role: "user", Content: "b"}}}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	c, err := Read(p, sample.Params{})
	if err != nil || c.Messages[0].Content != "b" {
		t.Fatalf("%v %+v", err, c)
	}
	// A directory that cannot be written is an error, not a lost chat silently.
	if err := Write(filepath.Join(p, "sub", "x.json"), File{}); err == nil {
		t.Error("writing under a file succeeded")
	}
}

// Settings in a file are held to the ranges the slash commands enforce:
// "repeat_penalty": -3 is refused, naming the file and the field, rather
// than loaded into the sampler.
func TestReadRefusesOutOfRangeSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	data := `{"messages":[{"role":"user","content":"hi"}],"params":{"temperature":0.7,"repeat_penalty":-3}}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(path, sample.Defaults())
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"params"`) || !strings.Contains(err.Error(), "repeat_penalty -3") {
		t.Fatalf("read: %v; want the file, the field and the value named", err)
	}
}
