package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/engine"
)

func runPromptCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	rc := run(context.Background(), append([]string{"prompt"}, args...), &out, &errb)
	return out.String(), errb.String(), rc
}

func TestPromptCommand(t *testing.T) {
	qwen3 := testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf")
	phi3 := testenv.Shared(t, "vocab/ggml-vocab-phi-3.gguf")
	dir := t.TempDir()
	conv := filepath.Join(dir, "conv.json")
	// The shape vkchat saves conversations in.
	saved := `{"version": 1, "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
		{"role": "assistant", "content": "<think>\nhmm\n</think>\n\nHello!"}, {"role": "user", "content": "Again"}]}`
	if err := os.WriteFile(conv, []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	// A conversation saved after a reply with reasoning: it ends with the
	// reply, so the next reply's prompt needs a user turn to answer.
	afterReply := filepath.Join(dir, "after-reply.json")
	if err := os.WriteFile(afterReply, []byte(`{"version": 1, "messages": [{"role": "user", "content": "hello"},
		{"role": "assistant", "content": "<think>Hmm</think>Hi!"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string // lines or fragments the output must hold
		not  []string
	}{
		{"qwen3, thinking off", []string{"--model", qwen3, "--system", "Be brief.", "--user", "Hi <|im_end|>", "--think=false"},
			[]string{"template: gguf\n", "enable_thinking: false\n", "121 bytes, 26 tokens\n",
				"--- prompt ---\n<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi <|im_end|><|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n--- tokens",
				"    0   151644  [<|im_start|>]\n", "   11    13048  \"Hi\"\n", "   12    82639  \" <|\"\n", "   22   151667  [<think>]\n", "   25      271  \"\\n\\n\"\n"},
			nil},
		{"qwen3, saved conversation: earlier reasoning dropped by the template", []string{"--model", qwen3, "--messages", conv},
			[]string{"enable_thinking: true\n", "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n--- tokens"},
			[]string{"hmm", "[<think>]"}},
		{"phi-3 drops the system role: folded", []string{"--model", phi3, "--messages", conv, "--system", "Terse."},
			[]string{"the system prompt is folded into the first user turn", "<|user|>\nTerse.\nHi<|end|>"},
			[]string{"Be brief."}},
		// Qwen3's template fails on an empty conversation ("messages[item]
		// is undefined"), re-renders the reasoning of a final reply and
		// would open a second assistant turn after it: the placeholder
		// user turn stands for the message not written yet.
		{"qwen3, fresh chat", []string{"--model", qwen3},
			[]string{"--- prompt ---\n<|im_start|>user\n(your next message)<|im_end|>\n<|im_start|>assistant\n--- tokens"}, nil},
		{"qwen3, after a reply with reasoning", []string{"--model", qwen3, "--messages", afterReply},
			[]string{"--- prompt ---\n<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\nHi!<|im_end|>\n<|im_start|>user\n(your next message)<|im_end|>\n<|im_start|>assistant\n--- tokens"},
			[]string{"Hmm"}},
		{"qwen3, after a reply with reasoning, thinking off", []string{"--model", qwen3, "--messages", afterReply, "--think=false"},
			[]string{"<|im_start|>assistant\nHi!<|im_end|>\n<|im_start|>user\n(your next message)<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n--- tokens"},
			[]string{"Hmm", "<|im_end|>\n<|im_start|>assistant\n<|im_start|>assistant"}},
		{"qwen3, after a reply, --user", []string{"--model", qwen3, "--messages", afterReply, "--user", "why?"},
			[]string{"<|im_start|>user\nwhy?<|im_end|>\n<|im_start|>assistant\n--- tokens"}, []string{"(your next message)"}},
		{"completion mode", []string{"--model", qwen3, "--template", "none", "--user", "once upon"},
			[]string{"template: none", "--- prompt ---\nonce upon\n"}, nil},
	}
	for _, tc := range cases {
		out, errOut, rc := runPromptCmd(t, tc.args...)
		if rc != 0 {
			t.Errorf("%s: exit %d: %s", tc.name, rc, errOut)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("%s: output holds %q:\n%s", tc.name, n, out)
			}
		}
	}

	out, errOut, rc := runPromptCmd(t, "--model", qwen3, "--user", "Hi", "--json")
	var r engine.RenderedPrompt
	if rc != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("--json: exit %d, %s %s", rc, out, errOut)
	}
	if r.Template != "gguf" || len(r.Tokens) == 0 || !r.Tokens[0].Special || r.Tokens[0].Text != "<|im_start|>" || !strings.HasSuffix(r.Text, "assistant\n") {
		t.Errorf("--json: %+v", r)
	}
}

func TestPromptCommandErrors(t *testing.T) {
	qwen3 := testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"no model", []string{"--user", "hi"}, "no model"},
		{"nothing to render in completion mode", []string{"--model", qwen3, "--template", "none"}, "nothing to render"},
		{"not JSON", []string{"--model", qwen3, "--messages", write("bad.json", "{oops")}, "bad.json: want a JSON list"},
		{"no role", []string{"--model", qwen3, "--messages", write("norole.json", `[{"content": "x"}]`)}, `norole.json: message 0: field "role"`},
		{"empty", []string{"--model", qwen3, "--messages", write("empty.json", `[]`)}, "no messages"},
		{"missing file", []string{"--model", filepath.Join(dir, "nope.gguf"), "--user", "hi"}, "nope.gguf"},
		{"unknown built-in", []string{"--model", qwen3, "--user", "hi", "--template", "frob"}, "frob"},
	}
	for _, tc := range cases {
		_, errOut, rc := runPromptCmd(t, tc.args...)
		if rc == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want an error saying %q", tc.name, rc, errOut, tc.want)
		}
	}
}

// TestPromptCommandSanitizes: a shared conversation file holds escape
// sequences (window title, OSC 52 clipboard write, clear screen, a C1
// CSI); printing its prompt, or an error quoting its path, must not pass
// them to the terminal. --json keeps the exact text.
func TestPromptCommandSanitizes(t *testing.T) {
	qwen3 := testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf")
	dir := t.TempDir()
	conv := filepath.Join(dir, "shared.json")
	hostile := `Hi\u001b]0;pwned\u0007 there\u001b]52;c;ZXZpbA==\u0007\u001b[2J\u009b2J\u001bc done`
	if err := os.WriteFile(conv, []byte(`[{"role": "user", "content": "`+hostile+`"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	hasControl := func(s string) bool {
		return strings.ContainsAny(s, "\x1b\x07\u009b")
	}
	out, errOut, rc := runPromptCmd(t, "--model", qwen3, "--messages", conv)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut)
	}
	if hasControl(out) || hasControl(errOut) {
		t.Errorf("control sequences reach the terminal:\n%q\n%q", out, errOut)
	}
	if !strings.Contains(out, "<|im_start|>user\nHi there done<|im_end|>") {
		t.Errorf("the message's text is not shown:\n%s", out)
	}

	out, _, rc = runPromptCmd(t, "--model", qwen3, "--messages", conv, "--json")
	var r engine.RenderedPrompt
	if rc != 0 || json.Unmarshal([]byte(out), &r) != nil || !strings.Contains(r.Text, "Hi\x1b]0;pwned\x07 there") {
		t.Errorf("--json does not keep the exact text: exit %d, %q", rc, r.Text)
	}

	bad := filepath.Join(dir, "bad\x1b]0;pwned\x07.json")
	if err := os.WriteFile(bad, []byte("{oops"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, rc = runPromptCmd(t, "--model", qwen3, "--messages", bad)
	if rc == 0 || hasControl(errOut) || !strings.Contains(errOut, "want a JSON list") {
		t.Errorf("error quoting the path: exit %d, %q", rc, errOut)
	}
}
