package chat

import (
	"strings"
	"testing"
)

// gemma4Template is the part of Gemma 4's chat template that reasoning
// depends on: turns as <|turn>role … <turn|>, <|think|> opening the system
// turn when thinking is on, and with thinking off an empty thought block
// pre-filled after the generation prompt.
const gemma4Template = `{{- bos_token -}}
{%- if enable_thinking is defined and enable_thinking -%}{{- '<|turn>system\n<|think|>\n<turn|>\n' -}}{%- endif -%}
{%- for m in messages -%}
{{- '<|turn>' + ('model' if m['role'] == 'assistant' else m['role']) + '\n' + m['content'] + '<turn|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|turn>model\n' -}}
{%- if not (enable_thinking is defined and enable_thinking) -%}{{- '<|channel>thought\n<channel|>' -}}{%- endif -%}
{%- endif -%}`

// A Gemma 4 reply splits into its thought channel and the answer however
// the stream cuts it; its template is recognized by its markup; with
// enable_thinking=false the pre-filled block is closed, so the reply is
// all answer; and an earlier reply goes back without its reasoning.
func TestGemma4Reasoning(t *testing.T) {
	for _, c := range []struct {
		name, reply, thought, answer string
	}{
		{"thought then answer", "<|channel>thought\nLet me think.<channel|>Hi!", "\nLet me think.", "Hi!"},
		{"answer only", "Hello.", "", "Hello."},
		{"thought never closed", "<|channel>thought\nstill", "\nstill", ""},
		{"blank after the block dropped", "<|channel>thought\nx<channel|>\n\nHi", "\nx", "Hi"},
		{"harmony markup is text", "<|channel|>final<|message|>Hi", "", "<|channel|>final<|message|>Hi"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for cut := 0; cut <= len(c.reply); cut++ {
				s := Gemma4.Splitter(false)
				th1, an1, _ := s.Add(c.reply[:cut])
				th2, an2, _ := s.Add(c.reply[cut:])
				th3, an3 := s.Flush()
				if th, an := th1+th2+th3, an1+an2+an3; th != c.thought || an != c.answer {
					t.Fatalf("cut at %d: thought %q answer %q, want %q %q", cut, th, an, c.thought, c.answer)
				}
			}
		})
	}
	tmpl, err := FromModel(gemma4Template, "gemma4")
	if err != nil || tmpl.Name() != "gguf" {
		t.Fatalf("%v (fell back: %s)", err, tmpl.FallbackReason())
	}
	if r := tmpl.Reasoning(); r.Open != Gemma4.Open || r.Close != Gemma4.Close {
		t.Fatalf("reasoning %+v, want Gemma 4's", r)
	}
	msgs := []Message{{Role: RoleUser, Content: "Hi"},
		{Role: RoleAssistant, Content: "<|channel>thought\nhmm<channel|>Hello!"},
		{Role: RoleUser, Content: "Again"}}
	on, err := tmpl.RenderWith(msgs, Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(on, "<|think|>") || strings.Contains(on, "hmm") || !strings.Contains(on, "<|turn>model\nHello!<turn|>") {
		t.Fatalf("thinking on rendered %q: want <|think|>, the earlier answer and no earlier reasoning", on)
	}
	off, err := tmpl.RenderWith(msgs, Options{AddGenerationPrompt: true, DisableThinking: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(off, "<|think|>") || !strings.HasSuffix(off, "<|turn>model\n<|channel>thought\n<channel|>") {
		t.Fatalf("thinking off rendered %q: want the empty block pre-filled", off)
	}
	if Gemma4.Opens([]Segment{{Text: off}}) || !Gemma4.Opens([]Segment{{Text: "<|turn>model\n<|channel>thought\n"}}) {
		t.Fatal("Opens: a pre-filled closed block is not open; an opened one is")
	}
}
