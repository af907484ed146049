package chat

import (
	"os"
	"path/filepath"
	"testing"
)

// conversation is llama.cpp's chat-template test conversation: a system
// prompt, alternating turns, and content with surrounding spaces that
// shows which templates trim.
func conversation() []Message {
	return []Message{
		{RoleSystem, "You are a helpful assistant"},
		{RoleUser, "Hello"},
		{RoleAssistant, "Hi there"},
		{RoleUser, "Who are you"},
		{RoleAssistant, "   I am an assistant   "},
		{RoleUser, "Another question"},
	}
}

// publicTemplate reads a real chat template (the decoded chat_template
// string of the model's tokenizer_config.json) from testdata.
func publicTemplate(t testing.TB, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func modelTemplateFrom(t testing.TB, file string) *Template {
	t.Helper()
	tmpl, err := FromModel(publicTemplate(t, file), "llama")
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if tmpl.Name() != "gguf" {
		t.Fatalf("%s: fell back to %s: %s", file, tmpl.Name(), tmpl.FallbackReason())
	}
	return tmpl
}

func mustBuiltin(t testing.TB, name string) *Template {
	t.Helper()
	tmpl, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// contentTexts lists the text of the Content segments, in order.
func contentTexts(segs []Segment) []string {
	var out []string
	for _, s := range segs {
		if s.Content {
			out = append(out, s.Text)
		}
	}
	return out
}
