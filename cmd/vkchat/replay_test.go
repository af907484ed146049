package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"vkchat/internal/scriptmodel"
	"vkchat/internal/testenv"
	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/runtime/engine/trace"
	"vkchat/runtime/vk/vulkan"
)

// llamaRef is the part of a llama.cpp dump in shared/reference this test
// needs: steps[i].top is [id, logit, prob] for the 10 likeliest tokens.
type llamaRef struct {
	Prompt       string  `json:"prompt"`
	PromptTokens []int32 `json:"prompt_tokens"`
	Steps        []struct {
		Top [][3]float64 `json:"top"`
	} `json:"steps"`
	Greedy []int32 `json:"greedy"`
}

// refLogprob is ln p of id at a step of the dump, or false when id is not
// in its top 10. The dump prints probabilities to six decimals, too coarse
// for rare tokens, so ln p comes from the top token's probability (large,
// so precise) plus the logit difference.
func refLogprob(top [][3]float64, id int32) (float64, bool) {
	for _, e := range top {
		if int32(e[0]) == id {
			return math.Log(top[0][2]) + e[1] - top[0][1], true
		}
	}
	return 0, false
}

// TestRunLogprobsMatchLlamaCppAndReplay: `vkchat run --temp 0 --logprobs F`
// writes llama.cpp's greedy tokens with log-probabilities within 0.05 of
// llama.cpp's, for the chosen token and every alternative both list; then
// `vkchat replay F` exits 0, and a tampered export makes it exit 1 naming
// the first difference.
func TestRunLogprobsMatchLlamaCppAndReplay(t *testing.T) {
	model := testenv.Model(t, "stories260K.gguf")
	const n = 40
	for i := 1; i <= 4; i++ {
		name := fmt.Sprintf("stories260K.p%d.json", i)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(testenv.Shared(t, filepath.Join("reference", name)))
			if err != nil {
				t.Fatal(err)
			}
			var ref llamaRef
			if err := json.Unmarshal(data, &ref); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out := filepath.Join(t.TempDir(), "lp.jsonl")
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"run", "--model", model, "--prompt", ref.Prompt, "-n", fmt.Sprint(n),
				"--temp", "0", "--logprobs", out}, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("run exited %d: %s", code, stderr.String())
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			h, toks, err := trace.Read(f, out)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if h.Prompt != ref.Prompt || h.Backend != "cpu" || h.Params.Temperature != 0 || len(h.ModelSHA256) != 64 || h.Vkchat == "" {
				t.Errorf("header %+v", h)
			}
			if len(toks) != n {
				t.Fatalf("%d token lines, want %d", len(toks), n)
			}
			worst := 0.0
			for k, tok := range toks {
				if tok.ID != ref.Greedy[k] {
					t.Fatalf("token %d: id %d, llama.cpp's greedy %d", k, tok.ID, ref.Greedy[k])
				}
				if len(tok.Top) < 10 {
					t.Errorf("token %d: %d alternatives, want at least 10", k, len(tok.Top))
				}
				step := ref.Steps[len(ref.PromptTokens)-1+k].Top
				want, _ := refLogprob(step, tok.ID)
				worst = max(worst, math.Abs(tok.Logprob-want))
				if math.Abs(tok.Logprob-want) > 0.05 {
					t.Errorf("token %d (%d): logprob %.4f, llama.cpp %.4f", k, tok.ID, tok.Logprob, want)
				}
				for _, alt := range tok.Top {
					if w, ok := refLogprob(step, alt.ID); ok {
						worst = max(worst, math.Abs(alt.Logprob-w))
						if math.Abs(alt.Logprob-w) > 0.05 {
							t.Errorf("token %d alternative %d: logprob %.4f, llama.cpp %.4f", k, alt.ID, alt.Logprob, w)
						}
					}
				}
			}
			t.Logf("largest |logprob − llama.cpp's| over %d steps and their shared top-10: %.4f", n, worst)

			stdout.Reset()
			stderr.Reset()
			if code := run(context.Background(), []string{"replay", out}, &stdout, &stderr); code != 0 {
				t.Fatalf("replay exited %d: %s", code, stderr.String())
			}
			if !strings.Contains(stdout.String(), fmt.Sprintf("all %d tokens", n)) {
				t.Errorf("replay said %q", stdout.String())
			}

			// Change one recorded token: replay must fail there.
			lines := strings.Split(strings.TrimSpace(readFile(t, out)), "\n")
			var tok trace.Token
			if err := json.Unmarshal([]byte(lines[1+7]), &tok); err != nil {
				t.Fatal(err)
			}
			tok.ID = tok.Top[1].ID
			b, _ := json.Marshal(tok)
			lines[1+7] = string(b)
			bad := filepath.Join(t.TempDir(), "bad.jsonl")
			if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout.Reset()
			stderr.Reset()
			code = run(context.Background(), []string{"replay", bad}, &stdout, &stderr)
			if code != 1 || !strings.Contains(stderr.String(), "token 7 differs") {
				t.Errorf("tampered replay: exit %d, stderr %q; want 1 and \"token 7 differs\"", code, stderr.String())
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReplayRejectsBadExports: broken files fail with the file, line and
// field named, never a panic.
func TestReplayRejectsBadExports(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, body, want string }{
		{"empty", "", "empty file"},
		{"not json", "hello\n", "line 1: not JSON"},
		{"no header", `{"type":"token","index":0}` + "\n", `line 1: field "type" is "token", want "header"`},
		{"no model", `{"type":"header"}` + "\n", `field "model" is empty`},
		{"out of order", `{"type":"header","model":"m"}` + "\n" + `{"type":"token","index":3}` + "\n", `line 2: field "index" is 3, want 0`},
		{"odd type", `{"type":"header","model":"m"}` + "\n" + `{"type":"what"}` + "\n", `line 2: field "type" is "what"`},
		{"repeat -3", `{"type":"header","model":"m","params":{"temperature":0.8,"top_p":0.95,"repeat_penalty":-3}}` + "\n", `line 1: field "params": repeat_penalty -3 is out of range`},
		{"token temperature 9", `{"type":"header","model":"m"}` + "\n" + `{"type":"token","index":0,"params":{"temperature":9,"top_p":0.95,"repeat_penalty":1}}` + "\n", `line 2: field "params": temperature 9 is out of range`},
	}
	for _, tc := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		if err := os.WriteFile(p, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"replay", p}, &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), tc.want) || !strings.Contains(stderr.String(), p) {
			t.Errorf("%s: exit %d, stderr %q; want 1 naming %s and %q", tc.name, code, stderr.String(), p, tc.want)
		}
	}
}

// TestReplaySampled: with temperature, top-k/top-p/min-p and a repeat
// penalty on, the same seed and backend reproduce every token and logprob,
// on the reference backend and on Vulkan when a device is there.
func TestReplaySampled(t *testing.T) {
	model := testenv.Model(t, "stories260K.gguf")
	backends := []string{"cpu"}
	if devs, err := vulkan.Devices(); err == nil && len(devs) > 0 {
		backends = append(backends, "vulkan")
	} else {
		t.Logf("vulkan not tested: no Vulkan device (%v)", err)
	}
	for _, be := range backends {
		t.Run(be, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "lp.jsonl")
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{"run", "--model", model, "--backend", be, "--prompt", "The little dog wanted to", "-n", "60",
				"--temp", "1.1", "--top-k", "20", "--top-p", "0.9", "--min-p", "0.02", "--repeat-penalty", "1.1", "--seed", "7", "--logprobs", out},
				&stdout, &stderr); code != 0 {
				t.Fatalf("run exited %d: %s", code, stderr.String())
			}
			stdout.Reset()
			if code := run(context.Background(), []string{"replay", out}, &stdout, &stderr); code != 0 {
				t.Fatalf("replay exited %d: %s", code, stderr.String())
			}
			if !strings.Contains(stdout.String(), "on "+be) {
				t.Errorf("replay ran elsewhere: %q", stdout.String())
			}
		})
	}
}

// TestReplayChatExport: an export of a chat reply (the model's own
// template, which the chat calls "gguf") replays through the command.
func TestReplayChatExport(t *testing.T) {
	ctx := context.Background()
	m, err := scriptmodel.WriteQwen3Thinker(testenv.Shared(t, "vocab/ggml-vocab-qwen3.gguf"),
		filepath.Join(t.TempDir(), "qwen3-script.gguf"), "qwen3")
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.Load(ctx, m.Path, engine.Options{Backend: "cpu", ContextSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req := engine.Request{Messages: []chat.Message{{Role: chat.RoleUser, Content: "hello"}}}
	h, err := trace.NewHeader(s, req)
	if err != nil {
		t.Fatal(err)
	}
	if h.Template != "gguf" {
		t.Fatalf("template %q, want the model's own (gguf)", h.Template)
	}
	out := filepath.Join(t.TempDir(), "chat.jsonl")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	w, err := trace.NewWriter(f, h, s.TokenText)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.Generate(ctx, req, func(ev engine.Event) {
		if ev.Kind == engine.EventToken {
			w.Token(*ev.Token)
			n++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"replay", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("replay exited %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("all %d tokens", n)) {
		t.Errorf("replay said %q", stdout.String())
	}
}

// Replay refuses what is not a regular file, at once, naming it: a FIFO
// would block the open and /dev/zero would never end.
func TestReplayRefusesNonRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{fifo, "/dev/zero", t.TempDir()} {
		done := make(chan string, 1)
		go func() {
			var stdout, stderr bytes.Buffer
			run(context.Background(), []string{"replay", p}, &stdout, &stderr)
			done <- stderr.String()
		}()
		select {
		case msg := <-done:
			if !strings.Contains(msg, p) || !strings.Contains(msg, "not a regular file") {
				t.Errorf("%s: %q; want it refused by name", p, msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: replay still running after 10 s", p)
		}
	}
}

// The model named by an export is refused the same way before hashing, and
// a canceled context stops the hash.
func TestReplayModelHashRefusesAndCancels(t *testing.T) {
	if _, err := trace.FileSHA256Context(context.Background(), "/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("hash /dev/zero: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := trace.FileSHA256Context(ctx, testenv.Model(t, "stories260K.gguf")); !errors.Is(err, context.Canceled) {
		t.Errorf("hash with a canceled context: %v", err)
	}
}

// The sampler flags are held to the chat commands' ranges, so no export
// can carry a setting replay would refuse.
func TestSamplerFlagsRanges(t *testing.T) {
	for _, c := range []struct{ flag, want string }{
		{"--repeat-penalty=-3", "--repeat-penalty -3 is out of range"},
		{"--temp=9", "--temp 9 is out of range"},
		{"--top-p=1.5", "--top-p 1.5 is out of range"},
		{"--presence-penalty=2.5", "--presence-penalty 2.5 is out of range (-2 to 2)"},
		{"--frequency-penalty=-3", "--frequency-penalty -3 is out of range (-2 to 2)"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"run", "--model", testenv.Model(t, "stories260K.gguf"), c.flag, "-n", "1"}, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", c.flag, code, stderr.String(), c.want)
		}
	}
}
