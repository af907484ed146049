package chat

import (
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// A harmony reply splits into its analysis (the reasoning) and the final
// message (the answer), channel markup in neither, however the stream cuts
// it into pieces; <think> tags mean nothing to it, and its markup nothing
// to a <think> model.
func TestHarmonySplitter(t *testing.T) {
	cases := []struct {
		name            string
		r               Reasoning
		reply           string
		thought, answer string
	}{
		{"analysis then final", Harmony, "<|channel|>analysis<|message|>Let me think.<|end|><|start|>assistant<|channel|>final<|message|>Hi!", "Let me think.", "Hi!"},
		{"final only", Harmony, "<|channel|>final<|message|>Hi there", "", "Hi there"},
		{"no markup", Harmony, "Hello.", "", "Hello."},
		{"analysis never closed", Harmony, "<|channel|>analysis<|message|>still going", "still going", ""},
		{"think tags are text", Harmony, "<think>x</think>y", "", "<think>x</think>y"},
		{"harmony markup is text to <think>", ThinkTags, "<|channel|>final<|message|>Hi", "", "<|channel|>final<|message|>Hi"},
		{"<think> unchanged", ThinkTags, "<think>\nhmm\n</think>\n\nHi!", "\nhmm\n", "Hi!"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if th, an := c.r.Split(c.reply, false); th != c.thought || an != c.answer {
				t.Fatalf("whole: thought %q answer %q, want %q %q", th, an, c.thought, c.answer)
			}
			// every cut into two pieces, and byte by byte
			for cut := 0; cut <= len(c.reply); cut++ {
				s := c.r.Splitter(false)
				th1, an1, _ := s.Add(c.reply[:cut])
				th2, an2, _ := s.Add(c.reply[cut:])
				th3, an3 := s.Flush()
				if th, an := th1+th2+th3, an1+an2+an3; th != c.thought || an != c.answer {
					t.Fatalf("cut at %d: thought %q answer %q", cut, th, an)
				}
			}
			s := c.r.Splitter(false)
			var th, an strings.Builder
			for i := range len(c.reply) {
				a, b, _ := s.Add(c.reply[i : i+1])
				th.WriteString(a)
				an.WriteString(b)
			}
			a, b := s.Flush()
			if th.String()+a != c.thought || an.String()+b != c.answer {
				t.Fatalf("byte by byte: thought %q answer %q", th.String()+a, an.String()+b)
			}
		})
	}
}

// gpt-oss's own template (o200k_harmony vocabulary) is recognized as
// harmony, and an earlier reply kept as the model wrote it goes back as its
// final message only: the template writes the channel markup, reasoning is
// dropped, and the markup is not doubled.
func TestHarmonyTemplateHistory(t *testing.T) {
	f, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-gptoss.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := f.String("tokenizer.chat_template")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := FromModel(src, "gpt-oss")
	if err != nil || tmpl.Name() != "gguf" {
		t.Fatalf("%v (fell back: %s)", err, tmpl.FallbackReason())
	}
	if r := tmpl.Reasoning(); r.Open != Harmony.Open {
		t.Fatalf("reasoning %+v, want harmony", r)
	}
	msgs := []Message{{Role: RoleUser, Content: "Hi"},
		{Role: RoleAssistant, Content: "<|channel|>analysis<|message|>hmm<|end|><|start|>assistant<|channel|>final<|message|>Hello!"},
		{Role: RoleUser, Content: "Again"}}
	out, err := tmpl.RenderWith(msgs, Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|end|><|start|>user<|message|>Again<|end|><|start|>assistant"
	if !strings.HasSuffix(out, want) || strings.Contains(out, "hmm") {
		t.Fatalf("rendered\n%q\nwant it to end with\n%q and hold no reasoning", out, want)
	}
}

// reasoning_effort reaches gpt-oss's real template: unset, it writes its
// default ("Reasoning: medium"); set, the value; and a value outside the
// template's three is refused before rendering.
func TestHarmonyReasoningEffort(t *testing.T) {
	f, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-gptoss.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := f.String("tokenizer.chat_template")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := FromModel(src, "gpt-oss")
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: RoleUser, Content: "Hi"}}
	for _, tc := range []struct{ effort, want string }{
		{"", "Reasoning: medium"},
		{"low", "Reasoning: low"},
		{"high", "Reasoning: high"},
	} {
		out, err := tmpl.RenderWith(msgs, Options{AddGenerationPrompt: true, ReasoningEffort: tc.effort})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("effort %q: rendered\n%q\nwant it to hold %q", tc.effort, out, tc.want)
		}
	}
	for _, bad := range []string{"max", "HIGH", " low"} {
		if CheckReasoningEffort(bad) == nil {
			t.Errorf("effort %q accepted", bad)
		}
	}
}
