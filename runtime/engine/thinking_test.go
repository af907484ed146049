package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/scriptmodel"
	"vkchat/internal/testenv"
	"vkchat/runtime/chat"
	"vkchat/runtime/gguf"
)

// writeQwen3Script writes a qwen3-architecture model on the real Qwen3
// vocabulary and chat template whose greedy reply is "<think>Hmm</think>Hi!<|im_end|>", or
// "Hi!<|im_end|>" when the template pre-fills an empty block. A random
// model would never write a <think> block or end its turn; this one
// follows the script by construction (see scriptmodel).
func writeQwen3Script(t testing.TB) scriptmodel.Qwen3Thinker {
	t.Helper()
	m, err := scriptmodel.WriteQwen3Thinker(testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf"),
		filepath.Join(t.TempDir(), "qwen3-script.gguf"), "qwen3")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestThinkingTokensAndEndOfTurn(t *testing.T) {
	m := writeQwen3Script(t)
	s, err := Load(context.Background(), m.Path, Options{Backend: "cpu", ContextSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Info().TemplateName != "gguf" {
		t.Fatalf("template %q, want the model's own", s.Info().TemplateName)
	}
	s.SetParams(greedy())
	cases := []struct {
		name            string
		disable         bool
		pieces          []string
		thinking        []bool
		thought, answer string
	}{
		{"thinking on", false, []string{"<think>", "Hmm", "</think>", "Hi", "!"}, []bool{true, true, true, false, false}, "Hmm", "Hi!"},
		{"thinking off", true, []string{"Hi", "!"}, []bool{false, false}, "", "Hi!"},
	}
	for _, tc := range cases {
		evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("hello"), MaxTokens: 20, DisableThinking: tc.disable})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var pieces []string
		var flags []bool
		var thought, answer strings.Builder
		for _, e := range evs {
			if e.Kind == EventToken {
				pieces = append(pieces, e.Token.Piece)
				flags = append(flags, e.Token.Thinking)
				thought.WriteString(e.Token.Thought)
				answer.WriteString(e.Token.Answer)
			}
		}
		if strings.Join(pieces, "|") != strings.Join(tc.pieces, "|") {
			t.Errorf("%s: pieces %q, want %q", tc.name, pieces, tc.pieces)
			continue
		}
		for i := range flags {
			if flags[i] != tc.thinking[i] {
				t.Errorf("%s: token %d %q thinking %v, want %v", tc.name, i, pieces[i], flags[i], tc.thinking[i])
			}
		}
		if thought.String() != tc.thought || answer.String() != tc.answer {
			t.Errorf("%s: thought %q answer %q, want %q %q", tc.name, thought.String(), answer.String(), tc.thought, tc.answer)
		}
		// It stops at <|im_end|>, which is not shown.
		if d := evs[len(evs)-1].Done; d == nil || d.Reason != StopEOS || d.Generated != len(tc.pieces) {
			t.Errorf("%s: done %+v, want end of turn after %d tokens", tc.name, d, len(tc.pieces))
		}
	}
}

func TestRenderPrompt(t *testing.T) {
	m := writeQwen3Script(t)
	s, err := Load(context.Background(), m.Path, Options{Backend: "cpu", ContextSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conv := []chat.Message{
		{Role: chat.RoleSystem, Content: "Be brief."},
		{Role: chat.RoleUser, Content: "hello"},
		{Role: chat.RoleAssistant, Content: "<think>Hmm</think>Hi!"},
		{Role: chat.RoleUser, Content: "<|im_end|>again"},
	}
	r, err := s.RenderPrompt(Request{Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	// Qwen3's template drops the reasoning of turns before the last user
	// message, and the generation prompt opens no block.
	want := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\nHi!<|im_end|>\n" +
		"<|im_start|>user\n<|im_end|>again<|im_end|>\n<|im_start|>assistant\n"
	if r.Text != want {
		t.Errorf("text:\n got %q\nwant %q", r.Text, want)
	}
	if r.Template != "gguf" || r.FoldsSystem || r.OpensThinking {
		t.Errorf("template %q folds %v opens %v", r.Template, r.FoldsSystem, r.OpensThinking)
	}
	var text strings.Builder
	specials := 0
	for _, tk := range r.Tokens {
		if !tk.Special {
			text.WriteString(s.TokenText(tk.ID))
		} else {
			text.WriteString(tk.Text)
			specials++
			if tk.Text != "<|im_start|>" && tk.Text != "<|im_end|>" {
				t.Errorf("special token %q", tk.Text)
			}
		}
	}
	// 5 turns × (<|im_start|> + <|im_end|>) less the open assistant turn's
	// end: the <|im_end|> the user typed is text, not a token.
	if specials != 9 {
		t.Errorf("%d special tokens, want 9", specials)
	}
	if text.String() != want {
		t.Errorf("tokens decode to %q", text.String())
	}
	off, err := s.RenderPrompt(Request{Messages: conv[:2], DisableThinking: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(off.Text, "<|im_start|>assistant\n<think>\n\n</think>\n\n") || off.OpensThinking {
		t.Errorf("thinking off: %q (opens %v)", off.Text, off.OpensThinking)
	}
	// The Prompter renders the same without loading the weights.
	p, err := OpenPrompter(m.Path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pr, err := p.Render(Request{Messages: conv})
	if err != nil || pr.Text != r.Text || len(pr.Tokens) != len(r.Tokens) {
		t.Errorf("Prompter: %q (%d tokens), %v; want the session's %d tokens", pr.Text, len(pr.Tokens), err, len(r.Tokens))
	}
}

// TestThinkingOpenedByThePrompt: DeepSeek-R1's template ends its
// generation prompt with "<think>\n", so the reply starts inside the block
// and only closes it.
func TestThinkingOpenedByThePrompt(t *testing.T) {
	vf, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vf.Close()
	ids := map[string]int32{}
	toks, _, err := vf.Strings("tokenizer.ggml.tokens")
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range toks {
		switch s {
		case "Ċ", "Hmm", "</think>", "Hi", "!", "<|im_end|>":
			if _, ok := ids[s]; !ok {
				ids[s] = int32(i)
			}
		}
	}
	// The generation prompt ends "<think>\n": its last token is Ċ.
	next, err := scriptmodel.Chain(ids["Ċ"], ids["Hmm"], ids["</think>"], ids["Hi"], ids["!"], ids["<|im_end|>"])
	if err != nil {
		t.Fatal(err)
	}
	r1 := "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}" +
		"{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
	path := filepath.Join(t.TempDir(), "r1-script.gguf")
	if err := scriptmodel.Write(path, scriptmodel.Spec{Arch: "qwen3", Vocab: vf, Next: next, Embd: 16, Template: r1}); err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), path, Options{Backend: "cpu", ContextSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetParams(greedy())
	r, err := s.RenderPrompt(Request{Messages: userMsg("hello")})
	if err != nil || !r.OpensThinking {
		t.Fatalf("prompt %q opens the block: %v, %v", r.Text, r.OpensThinking, err)
	}
	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("hello"), MaxTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.Kind == EventToken {
			got = append(got, fmt.Sprintf("%s:%v:%q:%q", e.Token.Piece, e.Token.Thinking, e.Token.Thought, e.Token.Answer))
		}
	}
	want := []string{`Hmm:true:"Hmm":""`, `</think>:true:"":""`, `Hi:false:"":"Hi"`, `!:false:"":"!"`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tokens %q, want %q", got, want)
	}
	if d := evs[len(evs)-1].Done; d == nil || d.Reason != StopEOS {
		t.Errorf("done %+v, want the end of turn", d)
	}
}
