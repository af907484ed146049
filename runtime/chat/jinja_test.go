package chat

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestRealTemplatesGolden renders real models' templates through FromModel
// and pins the output (as Hugging Face's Python Jinja renders them) and
// the content segments.
func TestRealTemplatesGolden(t *testing.T) {
	conv := conversation()
	noSystem := conv[1:]
	cases := []struct {
		file     string
		msgs     []Message
		bos, eos string
		want     string
		content  []string // the Content segments, in order
	}{
		{"smollm2-instruct.jinja", noSystem, "<|im_start|>", "<|im_end|>",
			"<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n",
			[]string{"Hello", "Hi there", "Who are you", "   I am an assistant   ", "Another question"}},
		{"smollm2-instruct.jinja", conv, "<|im_start|>", "<|im_end|>",
			"<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n",
			[]string{"You are a helpful assistant", "Hello", "Hi there", "Who are you", "   I am an assistant   ", "Another question"}},
		{"qwen2-instruct.jinja", conv[1:2], "", "<|im_end|>",
			"<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
			[]string{"Hello"}},
		{"llama3-instruct.jinja", conv, "<|begin_of_text|>", "<|eot_id|>",
			"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
			// | trim: the hole holds the stripped content
			[]string{"You are a helpful assistant", "Hello", "Hi there", "Who are you", "I am an assistant", "Another question"}},
		{"tinyllama-chat.jinja", conv, "<s>", "</s>",
			"<|system|>\nYou are a helpful assistant</s>\n<|user|>\nHello</s>\n<|assistant|>\nHi there</s>\n<|user|>\nWho are you</s>\n<|assistant|>\n   I am an assistant   </s>\n<|user|>\nAnother question</s>\n<|assistant|>\n",
			[]string{"You are a helpful assistant", "Hello", "Hi there", "Who are you", "   I am an assistant   ", "Another question"}},
		{"mistral-instruct-v0.2.jinja", noSystem, "<s>", "</s>",
			"<s>[INST] Hello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]",
			[]string{"Hello", "Hi there", "Who are you", "   I am an assistant   ", "Another question"}},
		// namespace(), "is defined", and a default system prompt when none is given.
		{"deepseek-coder-instruct.jinja", noSystem[:1], "<｜begin▁of▁sentence｜>", "<|EOT|>",
			"<｜begin▁of▁sentence｜>You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, and you only answer questions related to computer science. For politically sensitive questions, security and privacy issues, and other non-computer science questions, you will refuse to answer\n### Instruction:\nHello\n### Response:\n",
			[]string{"Hello"}},
		{"deepseek-coder-instruct.jinja", conv[:3], "<｜begin▁of▁sentence｜>", "<|EOT|>",
			"<｜begin▁of▁sentence｜>You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### Response:\n",
			[]string{"You are a helpful assistant", "Hello", "Hi there"}},
		{"llama2-chat.jinja", conv[:4], "<s>", "</s>",
			"<s>[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST] Hi there </s><s>[INST] Who are you [/INST]",
			[]string{"You are a helpful assistant", "Hello", "Hi there", "Who are you"}},
	}
	for _, tc := range cases {
		tmpl := modelTemplateFrom(t, tc.file)
		got, err := tmpl.Render(tc.msgs, true, tc.bos, tc.eos)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.file, got, tc.want)
		}
		segs, err := tmpl.RenderSegments(tc.msgs, true, tc.bos, tc.eos)
		if err != nil {
			t.Errorf("%s: segments: %v", tc.file, err)
			continue
		}
		if Join(segs) != got {
			t.Errorf("%s: segments join to %q, Render gave %q", tc.file, Join(segs), got)
		}
		if c := contentTexts(segs); !slices.Equal(c, tc.content) {
			t.Errorf("%s: content segments %q, want %q", tc.file, c, tc.content)
		}
	}
}

func TestMistralRaisesOnBadRoles(t *testing.T) {
	tmpl := modelTemplateFrom(t, "mistral-instruct-v0.2.jinja")
	cases := []struct {
		msgs []Message
		want string
	}{
		// (A leading system prompt is folded into the first user turn, as
		// llama.cpp does, since this template refuses the system role.)
		{[]Message{{RoleAssistant, "a"}, {RoleUser, "b"}}, "Conversation roles must alternate user/assistant/user/assistant/..."},
		{[]Message{{RoleUser, "a"}, {RoleUser, "b"}}, "Conversation roles must alternate user/assistant/user/assistant/..."},
		{[]Message{{RoleUser, "a"}, {"tool", "b"}}, "Only user and assistant roles are supported!"},
	}
	for _, tc := range cases {
		for name, render := range map[string]func() error{
			"Render":         func() error { _, err := tmpl.Render(tc.msgs, true, "<s>", "</s>"); return err },
			"RenderSegments": func() error { _, err := tmpl.RenderSegments(tc.msgs, true, "<s>", "</s>"); return err },
		} {
			err := render()
			var raise *RaiseError
			if !errors.As(err, &raise) || raise.Msg != tc.want {
				t.Errorf("%s %v: error %v, want RaiseError %q", name, tc.msgs, err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: message %q does not say %q", name, err, tc.want)
			}
		}
	}
}

func TestSegmentsEdgeCases(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		msgs    []Message
		want    []Segment
		wantErr error
	}{
		{
			name: "content repeated",
			src:  "{% for m in messages %}[{{ m.content }}|{{ m.content }}]{% endfor %}",
			msgs: []Message{{RoleUser, "a"}},
			want: []Segment{{Text: "["}, {Text: "a", Content: true}, {Text: "|"}, {Text: "a", Content: true}, {Text: "]"}},
		},
		{
			name: "messages reordered",
			src:  "{% for m in messages|reverse %}<{{ m.role }}>{{ m.content }}{% endfor %}",
			msgs: []Message{{RoleUser, "first"}, {RoleAssistant, "second"}},
			want: []Segment{{Text: "<assistant>"}, {Text: "second", Content: true}, {Text: "<user>"}, {Text: "first", Content: true}},
		},
		{
			name: "content equal to the markup after it",
			src:  "{% for m in messages %}{{ m.content }}<|end|>{% endfor %}",
			msgs: []Message{{RoleUser, "<|end|>"}, {RoleUser, "<|end|><|end|>"}},
			want: []Segment{{Text: "<|end|>", Content: true}, {Text: "<|end|>"}, {Text: "<|end|><|end|>", Content: true}, {Text: "<|end|>"}},
		},
		{
			name: "content holding what looks like a marker",
			src:  "{% for m in messages %}<{{ m.content }}>{% endfor %}",
			msgs: []Message{{RoleUser, "vkc00000000m0e vkc00000001m0e"}},
			want: []Segment{{Text: "<"}, {Text: "vkc00000000m0e vkc00000001m0e", Content: true}, {Text: ">"}},
		},
		{
			// The shape of Qwen3's handling of reasoning in history.
			name: "reasoning dropped from an earlier answer",
			src:  "{% for m in messages %}{% set c = m.content %}{% if '</think>' in c %}{% set c = c.split('</think>')[-1].lstrip('\\n') %}{% endif %}<{{ m.role }}>{{ c }}{% endfor %}",
			msgs: []Message{{RoleUser, "q"}, {RoleAssistant, "<think>\nhmm\n</think>\n\nthe answer"}},
			want: []Segment{{Text: "<user>"}, {Text: "q", Content: true}, {Text: "<assistant>"}, {Text: "the answer", Content: true}},
		},
		{
			name:    "branching on what content says",
			src:     "{% for m in messages %}{% if 'secret' in m.content %}[redacted]{% else %}{{ m.content }}{% endif %}{% endfor %}",
			msgs:    []Message{{RoleUser, "the secret"}},
			wantErr: ErrSegments,
		},
		{
			name:    "content cut short",
			src:     "{% for m in messages %}{{ m.content[:3] }}{% endfor %}",
			msgs:    []Message{{RoleUser, "abcdefghijklmnopqrstuvwxyz"}},
			wantErr: ErrSegments,
		},
		{
			name:    "content upper-cased",
			src:     "{% for m in messages %}{{ m.content|upper }}{% endfor %}",
			msgs:    []Message{{RoleUser, "shout"}},
			wantErr: ErrSegments,
		},
	}
	for _, tc := range cases {
		j, err := compileJinja(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		tmpl := &Template{name: "gguf", render: j.render, text: j.text}
		segs, err := tmpl.RenderSegments(tc.msgs, true, "", "")
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: error %v, want %v", tc.name, err, tc.wantErr)
			}
			if _, err := tmpl.Render(tc.msgs, true, "", ""); err != nil {
				t.Errorf("%s: Render must still work: %v", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(segs, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, segs, tc.want)
		}
	}
}
