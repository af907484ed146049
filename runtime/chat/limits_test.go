package chat

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ardanlabs/jinja"
)

// hostileTemplates are chat templates a model file could carry that would
// exhaust memory, overflow the stack or hang without limits (issue 22).
// Each must fail FromModel's check, quickly and allocating little.
func hostileTemplates() map[string]string {
	r := strings.Repeat
	msgs := "{% for m in messages %}{{ m.content }}{% endfor %}"
	return map[string]string{
		"range 1e8":             "{% for i in range(100000000) %}{% endfor %}" + msgs,
		"range huge step count": "{% for i in range(0, 9223372036854775807, 1) %}{% endfor %}" + msgs,
		"x*2e9":                 "{{ 'x'*2000000000 }}" + msgs,
		"doubling loop":         "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}" + msgs,
		"tojson indent 1e9":     "{{ messages|tojson(indent=1e9) }}" + msgs,
		"tojson indent int":     "{{ messages|tojson(indent=1000000000) }}" + msgs,
		"strftime_now format":   "{{ strftime_now('%Y'*100000000) }}" + msgs,
		"strftime_now 1k":       "{{ strftime_now('%Y'*500) }}" + msgs,
		"huge indent":           "{{ 'a\nb'|indent(2000000000) }}" + msgs,
		"recursive macro":       "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(0) }}" + msgs,
		"deep if":               r("{% if true %}", 40000) + msgs + r("{% endif %}", 40000),
		"brackets 300k":         "{{ " + r("[", 300000) + r("]", 300000) + " }}" + msgs,
		"parens 1M":             "{{ " + r("(", 1000000) + "1" + r(")", 1000000) + " }}" + msgs,
		"sum 5M":                "{{ 1" + r("+1", 5000000) + " }}" + msgs,
		"three range(3000)":     "{% for i in range(3000) %}{% for j in range(3000) %}{% for k in range(3000) %}{% endfor %}{% endfor %}{% endfor %}" + msgs,
		"output":                "{% for i in range(100000) %}{{ 'x'*1000 }}{% endfor %}" + msgs,
		"self-holding list":     "{% set l = [] %}{% set _ = l.append(l) %}{{ l }}" + msgs,
	}
}

// measure runs f in a goroutine, so that a hang fails the test rather
// than stalling it, and returns its error, time and bytes allocated.
func measure(t *testing.T, f func() error) (error, time.Duration, uint64) {
	t.Helper()
	done := make(chan error, 1)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	go func() { done <- f() }()
	select {
	case err := <-done:
		d := time.Since(start)
		runtime.ReadMemStats(&after)
		return err, d, after.TotalAlloc - before.TotalAlloc
	case <-time.After(30 * time.Second):
		t.Fatal("still running after 30 s")
		return nil, 0, 0
	}
}

func TestHostileTemplatesFailTheLoadCheck(t *testing.T) {
	for name, src := range hostileTemplates() {
		t.Run(name, func(t *testing.T) {
			err, d, alloc := measure(t, func() error {
				tmpl, err := FromModel(src, "")
				if err == nil {
					_, err = tmpl.Render([]Message{{RoleUser, "Hi"}}, true, "", "")
				}
				return err
			})
			t.Logf("%v, %.1f MB: %v", d.Round(time.Millisecond), float64(alloc)/(1<<20), err)
			if !errors.Is(err, ErrNoTemplate) {
				t.Errorf("error %v, want ErrNoTemplate", err)
			}
			if err != nil && !errors.Is(err, jinja.ErrLimit) && !strings.Contains(err.Error(), "strftime_now: format longer") {
				t.Errorf("error %v does not name a limit", err)
			}
			if d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if alloc > 256<<20 {
				t.Errorf("allocated %d MB", alloc>>20)
			}
		})
	}
}

// TestHostileOnSecondMessage: a template that passes the load check and
// blows up once the conversation grows fails that render with an error
// naming the template and the limit.
func TestHostileOnSecondMessage(t *testing.T) {
	src := "{% if messages|length > 2 %}{{ 'x'*2000000000 }}{% endif %}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
	tmpl, err := FromModel(src, "")
	if err != nil || tmpl.Name() != "gguf" {
		t.Fatalf("FromModel: %v, %v", tmpl, err)
	}
	conv := []Message{{RoleUser, "Hi"}, {RoleAssistant, "Hello"}, {RoleUser, "Again"}}
	for _, render := range []func() error{
		func() error { _, err := tmpl.Render(conv, true, "", ""); return err },
		func() error { _, err := tmpl.RenderSegments(conv, true, "", ""); return err },
	} {
		err, d, alloc := measure(t, render)
		const want = "render gguf template: template: value size limit (16777216) exceeded"
		if err == nil || err.Error() != want || !errors.Is(err, jinja.ErrLimit) {
			t.Errorf("error %v, want %q", err, want)
		}
		if d > time.Second || alloc > 64<<20 {
			t.Errorf("took %v and %d MB", d, alloc>>20)
		}
	}
}

// TestRenderContext: a render stops once its context is done, and a
// cancelled load is not mistaken for an unusable template.
func TestRenderContext(t *testing.T) {
	src := "{% for m in messages %}{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}{{ m.content }}{% endfor %}"
	old := Limits
	Limits.MaxSteps = -1
	defer func() { Limits = old }()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := FromModelContext(ctx, src, "qwen2")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("FromModelContext: %v, want context.DeadlineExceeded", err)
	}

	tmpl, err := Builtin("chatml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	// Built-ins do not run template code; a done context does not matter.
	if _, err := tmpl.RenderContext(ctx, []Message{{RoleUser, "Hi"}}, Options{}); err != nil {
		t.Errorf("built-in: %v", err)
	}
	j, err := compileJinja(src)
	if err != nil {
		t.Fatal(err)
	}
	gguf := &Template{name: "gguf", render: j.render, text: j.text}
	if _, err := gguf.RenderContext(ctx, []Message{{RoleUser, "Hi"}}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("RenderContext: %v, want context.Canceled", err)
	}
	if _, err := gguf.RenderSegmentsContext(ctx, []Message{{RoleUser, "Hi"}}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("RenderSegmentsContext: %v, want context.Canceled", err)
	}
}

// repeatTemplate prints each message 150,000 times once the conversation
// has a second message, and once before: it passes the load check.
const repeatTemplate = "{% for m in messages %}{% if messages|length > 1 %}{% for i in range(150000) %}{{ m.content }}{% endfor %}" +
	"{% else %}{{ m.content }}{% endif %}{% endfor %}"

// TestRepeatedContentRendersQuickly: merging the content runs of such a
// render into segments was quadratic and outside every limit (minutes, and
// Esc could not stop it); it is linear now and the render takes about a
// second, its segments the true render with every byte content.
func TestRepeatedContentRendersQuickly(t *testing.T) {
	tmpl, err := FromModel(repeatTemplate, "")
	if err != nil || tmpl.Name() != "gguf" {
		t.Fatalf("FromModel: %v, %v", tmpl, err)
	}
	conv := []Message{{RoleUser, "Hello there"}, {RoleAssistant, "Hi"}}
	var segs []Segment
	err, d, alloc := measure(t, func() error {
		var err error
		segs, err = tmpl.RenderSegments(conv, true, "", "")
		return err
	})
	t.Logf("%v, %.1f MB", d.Round(time.Millisecond), float64(alloc)/(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	want := strings.Repeat("Hello there", 150000) + strings.Repeat("Hi", 150000)
	if len(segs) != 1 || !segs[0].Content || segs[0].Text != want {
		t.Errorf("%d segments (first content %v), want one content segment of %d bytes", len(segs), len(segs) > 0 && segs[0].Content, len(want))
	}
}

// TestFitStopsOnCancelAndLimit: fitting content into a render is part of
// the render, so a done context stops it and it counts against the step
// limit like the template's own work.
func TestFitStopsOnCancelAndLimit(t *testing.T) {
	const n = 150000
	msgs := []Message{{RoleUser, "Hello there"}}
	truth := strings.Repeat("Hello there", n)
	lits := make([]string, n+1)
	refs := make([]int, n)

	segs, ok, err := fit(context.Background(), truth, lits, refs, msgs)
	if err != nil || !ok || len(segs) != 1 || segs[0].Text != truth {
		t.Fatalf("fit: %d segments, %v, %v; want the whole text as one content segment", len(segs), ok, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok, err := fit(ctx, truth, lits, refs, msgs); ok || !errors.Is(err, context.Canceled) {
		t.Errorf("fit after cancel: %v, %v; want context.Canceled", ok, err)
	}

	old := Limits
	Limits.MaxSteps = 10000
	defer func() { Limits = old }()
	_, ok, err = fit(context.Background(), truth, lits, refs, msgs)
	if ok || !errors.Is(err, jinja.ErrLimit) || !strings.Contains(err.Error(), "step limit (10000) exceeded") {
		t.Errorf("fit past the step limit: %v, %v; want the step limit named", ok, err)
	}
}
