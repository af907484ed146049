package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"

	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

// withTemplate writes stories260K with tmpl as its chat template.
func withTemplate(t *testing.T, tmpl string) string {
	t.Helper()
	f, err := gguf.Open(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := fromgguf.Spec(f)
	s.Set("tokenizer.chat_template", tmpl)
	b, err := s.Encode(gguf.NewWriter())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A template that is fine for the load check and the first message but
// runs away on a longer conversation stops at its limit with an error the
// reply ends on, and a canceled request stops its render as a cancel, not
// an error: the session serves the next request either way.
func TestGenerateTemplateLimitsAndCancel(t *testing.T) {
	// cheap for one message, ~10^8 steps once there are three
	const tmpl = `{% for m in messages %}{% if loop.index > 2 %}{% for i in range(100000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}{% endif %}{{ m.role }}: {{ m.content }}
{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}`
	ctx := context.Background()
	s, err := Load(ctx, withTemplate(t, tmpl), Options{Backend: "cpu", ContextSize: 256, Params: greedy()})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	defer s.Close()
	run := func(ctx context.Context, msgs []string) (*DoneInfo, error) {
		req := Request{MaxTokens: 3}
		for i, m := range msgs {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			req.Messages = append(req.Messages, userMsg(m)[0])
			req.Messages[i].Role = role
		}
		var d *DoneInfo
		err := s.Generate(ctx, req, func(ev Event) {
			if ev.Kind == EventDone {
				d = ev.Done
			}
		})
		return d, err
	}
	if d, err := run(ctx, []string{"hi"}); err != nil || d.Reason == StopError {
		t.Fatalf("first message: %v, %+v", err, d)
	}
	d, err := run(ctx, []string{"hi", "there", "again"})
	if !errors.Is(err, jinja.ErrLimit) || d.Reason != StopError {
		t.Fatalf("third message: %v (%+v), want the step limit", err, d)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if d, err := run(canceled, []string{"hi", "there", "again"}); err != nil || d.Reason != StopCanceled {
		t.Fatalf("canceled: %v, %+v; want a cancel, not an error", err, d)
	}
	if d, err := run(ctx, []string{"hi"}); err != nil || d.Reason == StopError {
		t.Fatalf("after the failures: %v, %+v", err, d)
	}
}

// A model whose template cannot be used still loads, and the session says
// why: a built-in it recognises in its place, or plain completion.
func TestTemplateRejectionIsExplained(t *testing.T) {
	for _, c := range []struct {
		name, tmpl, want string
		completion       bool
	}{
		{"unrecognised", "{% for %}", "plain text completion instead", true},
		{"chatml-like but broken", "<|im_start|>{{ messages[0].content }<|im_end|>", "using the built-in chatml template instead", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Load(context.Background(), withTemplate(t, c.tmpl), Options{Backend: "cpu", ContextSize: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			info := s.Info()
			if !strings.Contains(info.TemplateNote, "not usable") || !strings.Contains(info.TemplateNote, c.want) || info.Completion != c.completion {
				t.Errorf("note %q, completion %v; want %q", info.TemplateNote, info.Completion, c.want)
			}
		})
	}
	s, err := Load(context.Background(), withTemplate(t, "{% for m in messages %}{{ m.content }}{% endfor %}"), Options{Backend: "cpu", ContextSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Info().TemplateNote != "" {
		t.Errorf("a usable template got a note: %q", s.Info().TemplateNote)
	}
}
