package chat

import (
	"errors"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

func TestFromModel(t *testing.T) {
	cases := []struct {
		name         string
		src, arch    string
		wantNil      bool
		wantErr      error
		wantName     string
		reasonSaying string // part of FallbackReason; "" means no fallback
	}{
		{name: "no template", src: "", arch: "llama", wantNil: true},
		{name: "blank template", src: " \n\t", arch: "qwen2", wantNil: true},
		{name: "real template", src: publicTemplate(t, "qwen2-instruct.jinja"), arch: "qwen2", wantName: "gguf"},
		{name: "syntax error, ChatML markup", src: "{% for m in messages %}<|im_start|>{{ m.content }", arch: "llama",
			wantName: "chatml", reasonSaying: "not usable"},
		{name: "unknown filter, Llama 3 markup", src: "<|start_header_id|>{{ messages[0].content | frobnicate }}", arch: "llama",
			wantName: "llama3", reasonSaying: "not usable"},
		{name: "ignores content, Zephyr markup", src: "<|user|>\n{{ eos_token }}", arch: "llama",
			wantName: "zephyr", reasonSaying: "does not print the message content"},
		{name: "always raises, [INST] markup", src: "{{ raise_exception('no chat here') }}[INST]", arch: "llama",
			wantName: "llama2", reasonSaying: "no chat here"},
		{name: "Phi-3 markup", src: "{% if %}<|user|>{{ x }}<|end|>", arch: "llama", wantName: "phi3", reasonSaying: "not usable"},
		{name: "broken, qwen architecture", src: "{{ oops", arch: "qwen2", wantName: "chatml", reasonSaying: "not usable"},
		{name: "broken, phi3 architecture", src: "{{ oops", arch: "phi3", wantName: "phi3", reasonSaying: "not usable"},
		{name: "broken, nothing to guess from", src: "{{ oops", arch: "llama", wantErr: ErrNoTemplate},
		{name: "content branching fails the probe", src: "{% if messages[0].content == 'Hello' %}hi{% endif %}<|im_start|>", arch: "llama",
			wantName: "chatml", reasonSaying: "cannot locate message content"},
	}
	for _, tc := range cases {
		tmpl, err := FromModel(tc.src, tc.arch)
		switch {
		case tc.wantErr != nil:
			if !errors.Is(err, tc.wantErr) || tmpl != nil {
				t.Errorf("%s: got %v, %v; want error %v", tc.name, tmpl, err, tc.wantErr)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
			continue
		case tc.wantNil:
			if tmpl != nil {
				t.Errorf("%s: got template %s, want none (completion mode)", tc.name, tmpl.Name())
			}
			continue
		}
		if tmpl.Name() != tc.wantName {
			t.Errorf("%s: Name %q, want %q (reason %q)", tc.name, tmpl.Name(), tc.wantName, tmpl.FallbackReason())
		}
		reason := tmpl.FallbackReason()
		if (tc.reasonSaying == "") != (reason == "") || !strings.Contains(reason, tc.reasonSaying) {
			t.Errorf("%s: FallbackReason %q, want one saying %q", tc.name, reason, tc.reasonSaying)
		}
		if _, err := tmpl.Render([]Message{{RoleUser, "hi"}}, true, "<s>", "</s>"); err != nil {
			t.Errorf("%s: the chosen template does not render: %v", tc.name, err)
		}
	}
}

// TestPhi3GGUFTemplate uses the template stored in a real GGUF file: the
// early Phi-3-mini one, which drops system messages (so the system prompt
// is folded into the first user turn, as llama.cpp does) and always ends
// user turns with the assistant header.
func TestPhi3GGUFTemplate(t *testing.T) {
	f, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-phi-3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, ok, err := f.String("tokenizer.chat_template")
	if err != nil || !ok {
		t.Fatalf("no chat template in the file: %v", err)
	}
	tmpl, err := FromModel(src, "phi3")
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.Name() != "gguf" {
		t.Fatalf("fell back: %s", tmpl.FallbackReason())
	}
	segs, err := tmpl.RenderSegments(conversation()[:3], true, "<s>", "<|endoftext|>")
	if err != nil {
		t.Fatal(err)
	}
	want := "<s><|user|>\nYou are a helpful assistant\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n"
	if got := Join(segs); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if !tmpl.FoldsSystem() {
		t.Error("FoldsSystem is false for a template that drops the system role")
	}
	if c := contentTexts(segs); len(c) != 2 || c[0] != "You are a helpful assistant\nHello" || c[1] != "Hi there" {
		t.Fatalf("content segments %q", c)
	}
}
