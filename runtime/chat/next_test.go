package chat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

func TestForNextReply(t *testing.T) {
	u, a := Message{RoleUser, "hi"}, Message{RoleAssistant, "hello"}
	cases := []struct {
		name  string
		msgs  []Message
		next  string
		want  []Message
		added bool
	}{
		{"fresh", nil, "", []Message{{RoleUser, NextPlaceholder}}, true},
		{"fresh with a draft", nil, "why?", []Message{{RoleUser, "why?"}}, true},
		{"only a system prompt", []Message{{RoleSystem, "s"}}, "", []Message{{RoleSystem, "s"}, {RoleUser, NextPlaceholder}}, true},
		{"after a reply", []Message{u, a}, "", []Message{u, a, {RoleUser, NextPlaceholder}}, true},
		{"the user's turn is last", []Message{u}, "", []Message{u}, false},
		{"a draft after the user's turn", []Message{u}, "more", []Message{u, {RoleUser, "more"}}, true},
	}
	for _, tc := range cases {
		got, added := ForNextReply(tc.msgs, tc.next)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || added != tc.added {
			t.Errorf("%s: got %v (added %v), want %v (%v)", tc.name, got, added, tc.want, tc.added)
		}
	}
	in := []Message{u, a}
	ForNextReply(in, "x")
	if len(in) != 2 || in[1] != a {
		t.Errorf("ForNextReply changed its input: %v", in)
	}
}

// everyTemplate is every chat template the shared data and testdata hold:
// llama.cpp's test cases, the real vocabularies' templates and the public
// templates in testdata, by name.
func everyTemplate(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tc := range loadCases(t, "templates/cases.json") {
		out["cases/"+tc.Name] = tc.Template
	}
	for _, v := range []string{"qwen3", "llama3", "gemma3", "phi-3", "gptoss"} {
		f, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-"+v+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		src, _, err := f.String("tokenizer.chat_template")
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		out["vocab/"+v] = src
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.jinja"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out["testdata/"+filepath.Base(file)] = string(b)
	}
	return out
}

// TestNextReplyPromptEveryTemplate renders the prompt of the next reply,
// as /prompt and vkchat prompt do, for every template: in a fresh chat,
// after a reply with and without reasoning, with and without a system
// prompt, with thinking on and off. Each must render with the placeholder
// as the last content (never markup): the prompt ends in the user's turn
// and the generation prompt, not in a second assistant turn.
func TestNextReplyPromptEveryTemplate(t *testing.T) {
	const reasoned = "<think>\nLet me think.\n</think>\n\nParis."
	convs := []struct {
		name string
		msgs []Message
	}{
		{"fresh", nil},
		{"fresh with a system prompt", []Message{{RoleSystem, "Be brief."}}},
		{"after a reply", []Message{{RoleUser, "Capital of France?"}, {RoleAssistant, "Paris."}}},
		{"after a reply with reasoning", []Message{{RoleUser, "Capital of France?"}, {RoleAssistant, reasoned}}},
		{"after a reply with reasoning and a system prompt", []Message{{RoleSystem, "Be brief."}, {RoleUser, "Capital of France?"}, {RoleAssistant, reasoned}}},
		{"after a reply without answer", []Message{{RoleUser, "Capital of France?"}, {RoleAssistant, "<think>\nhmm\n</think>"}}},
	}
	for name, src := range everyTemplate(t) {
		tmpl, err := FromModel(src, "llama")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, c := range convs {
			for _, think := range []bool{true, false} {
				msgs, added := ForNextReply(c.msgs, "")
				if !added {
					t.Fatalf("%s: no placeholder added", c.name)
				}
				segs, err := tmpl.RenderSegmentsWith(msgs, Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>", DisableThinking: !think})
				var raised *RaiseError
				if errors.As(err, &raised) {
					// A template may refuse a conversation (an assistant
					// turn without answer, say); that is its rule, and
					// the error says so.
					continue
				}
				if err != nil {
					t.Errorf("%s, %s, thinking %v: %v", name, c.name, think, err)
					continue
				}
				last := ""
				for _, s := range segs {
					if s.Content {
						last = s.Text
					}
				}
				if !strings.HasSuffix(last, NextPlaceholder) {
					t.Errorf("%s, %s, thinking %v: the placeholder is not the last content in %q", name, c.name, think, Join(segs))
				}
			}
		}
	}
}
