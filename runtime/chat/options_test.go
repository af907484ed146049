package chat

import (
	"slices"
	"testing"
	"time"
)

func TestFoldSystem(t *testing.T) {
	cases := []struct {
		name string
		in   []Message
		want []Message
	}{
		{"into the first user turn",
			[]Message{{RoleSystem, "S"}, {RoleUser, "U"}, {RoleAssistant, "A"}},
			[]Message{{RoleUser, "S\nU"}, {RoleAssistant, "A"}}},
		{"two system prompts join",
			[]Message{{RoleSystem, "S1"}, {RoleSystem, "S2"}, {RoleUser, "U"}},
			[]Message{{RoleUser, "S1\nS2\nU"}}},
		{"empty user content takes the system text alone",
			[]Message{{RoleSystem, "S"}, {RoleUser, ""}},
			[]Message{{RoleUser, "S"}}},
		{"before an assistant turn it becomes a user turn",
			[]Message{{RoleSystem, "S"}, {RoleAssistant, "A"}},
			[]Message{{RoleUser, "S"}, {RoleAssistant, "A"}}},
		{"trailing system prompt",
			[]Message{{RoleUser, "U"}, {RoleSystem, "S"}},
			[]Message{{RoleUser, "U"}, {RoleUser, "S"}}},
		{"empty system prompt vanishes",
			[]Message{{RoleSystem, ""}, {RoleUser, "U"}},
			[]Message{{RoleUser, "U"}}},
		{"no system prompt: unchanged",
			[]Message{{RoleUser, "U"}, {RoleAssistant, "A"}},
			[]Message{{RoleUser, "U"}, {RoleAssistant, "A"}}},
	}
	for _, tc := range cases {
		if got := FoldSystem(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSystemRoleDetection: templates that raise on a system turn or leave
// it out fold it; the others keep it.
func TestSystemRoleDetection(t *testing.T) {
	cases := []struct {
		src  string
		fold bool
	}{
		{"{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}", false},
		{"{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}{% endif %}{{ m.content }}{% endfor %}", true},
		{"{% for m in messages %}{% if m.role != 'system' %}{{ m.content }}{% endif %}{% endfor %}", true},
	}
	for _, tc := range cases {
		tmpl, err := FromModel(tc.src, "llama")
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if tmpl.FoldsSystem() != tc.fold {
			t.Errorf("%s: FoldsSystem %v, want %v", tc.src, tmpl.FoldsSystem(), tc.fold)
		}
	}
}

// TestTemplateVariables: enable_thinking, date_string, strftime_now,
// datetime and functions as llama.cpp passes them.
func TestTemplateVariables(t *testing.T) {
	// The generation prompt of Qwen3's template.
	qwen3Gen := "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}" +
		"{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}" +
		"{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}"
	day := time.Date(2026, time.March, 5, 14, 7, 9, 0, time.UTC)
	cases := []struct {
		name, src string
		opts      Options
		want      string
	}{
		{"thinking on by default", qwen3Gen, Options{AddGenerationPrompt: true},
			"<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"},
		{"thinking off pre-fills an empty block", qwen3Gen, Options{AddGenerationPrompt: true, DisableThinking: true},
			"<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
		{"date_string as Llama 3.x reads it", "{{ date_string }}|{{ messages[0].content }}", Options{Now: day}, "05 Mar 2026|q"},
		{"strftime_now, Granite's format", "{{ strftime_now('%B %d, %Y') }}{{ messages[0].content }}", Options{Now: day}, "March 05, 2026q"},
		{"strftime_now, more directives", "{{ strftime_now('%Y-%m-%d %H:%M:%S %a %A %b %j %I%p %%') }}{{ messages[0].content }}", Options{Now: day},
			"2026-03-05 14:07:09 Thu Thursday Mar 064 02PM %q"},
		// firefunction-v2's system prompt; llama.cpp's server formats
		// datetime with "%b %d %Y" (no time of day) and passes no
		// functions as empty.
		{"datetime and functions, as firefunction-v2 reads them", "Today is {{ datetime }}.{% if functions %} Functions: {{ functions }}{% endif %}|{{ messages[0].content }}",
			Options{Now: day}, "Today is Mar 05 2026.|q"},
	}
	for _, tc := range cases {
		tmpl, err := FromModel(tc.src, "llama")
		if err != nil || tmpl.Name() != "gguf" {
			t.Fatalf("%s: %v (%s)", tc.name, err, tmpl.FallbackReason())
		}
		got, err := tmpl.RenderWith([]Message{{RoleUser, "q"}}, tc.opts)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
