package jinja_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ardanlabs/jinja"
)

// Hostile templates (vkchat patch §3, NOTE-UPSTREAM.md): each must render
// or fail with the named limit quickly, allocating little, and never
// panic, overflow the stack or hang.

const (
	hostileTime  = 2 * time.Second // the cases take well under 1 s; slack for a loaded machine
	hostileAlloc = 256 << 20
)

type hostileCase struct {
	name string
	src  string
	lim  jinja.Limits
	ctx  func() (context.Context, context.CancelFunc)
	want string // substring of the error; "" means it must render
	out  string // with want == "": the expected output ("" = any)
}

func hostileCases() []hostileCase {
	r := strings.Repeat
	noSource := jinja.Limits{MaxSource: -1}
	return []hostileCase{
		{name: "range 1e8", src: "{% for i in range(100000000) %}{% endfor %}", want: "value size limit"},
		{name: "range huge step count", src: "{% for i in range(0, 9223372036854775807) %}{% endfor %}", want: "value size limit"},
		{name: "range near int64 max", src: "{% for i in range(9223372036854775800, 9223372036854775807, 5) %}{{ i }},{% endfor %}", out: "9223372036854775800,9223372036854775805,"},
		{name: "string repeat 2e9", src: "{{ 'x'*2000000000 }}", want: "value size limit"},
		{name: "string repeat negative", src: "[{{ 'x'*-3 }}]", out: "[]"},
		{name: "list repeat 1e9", src: "{{ [1, 2]*1000000000 }}", want: "value size limit"},
		{name: "list repeat", src: "{{ [1, 2]*2 }}", out: "[1, 2, 1, 2]"},
		{name: "doubling loop", src: "{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}", want: "value size limit"},
		{name: "doubling plus", src: "{% set ns = namespace(s='xy') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", want: "value size limit"},
		{name: "list doubling", src: "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", want: "value size limit"},
		{name: "tojson indent 1e9", src: "{{ {'a': [1, 2]}|tojson(indent=1e9) }}", want: "value size limit"},
		{name: "tojson indent negative", src: "{{ [1]|tojson(indent=-4) }}", out: "[\n1\n]"},
		{name: "strftime_now format", src: "{{ strftime_now('%Y'*4000000) }}", want: "value size limit"},
		{name: "strftime_now format 1e8", src: "{{ strftime_now('%Y'*100000000) }}", want: "value size limit"},
		{name: "indent 1e9", src: "{{ 'a\nb\nc'|indent(1000000000) }}", want: "value size limit"},
		{name: "indent many lines", src: "{{ ('\n'*1000000 ~ 'x')|indent(100) }}", want: "value size limit"},
		{name: "indent negative", src: "{{ 'a\nb'|indent(-5) }}", out: "a\nb"},
		{name: "join", src: "{{ (['x'*1000000]*100)|join(',') }}", want: "value size limit"},
		{name: "replace empty", src: "{{ ('x'*1000000).replace('', 'yyyyyyyyyyyyyyyyyyyy') }}", want: "value size limit"},
		{name: "replace filter", src: "{{ ('x'*1000000)|replace('x', 'y'*100) }}", want: "value size limit"},
		{name: "split empty", src: "{{ ('x'*10000000).split('')|length }}", want: "value size limit"},
		{name: "format", src: "{{ ('{0}'*100000).format('x'*1000) }}", want: "value size limit"},
		{name: "escape", src: "{{ ('<'*10000000)|e }}", want: "value size limit"},
		{name: "iterate huge string", src: "{% for c in 'x'*16000000 %}{% endfor %}", want: "value size limit"},
		{name: "three nested range(3000)", src: "{% for i in range(3000) %}{% for j in range(3000) %}{% for k in range(3000) %}{% endfor %}{% endfor %}{% endfor %}", want: "step limit"},
		{name: "output", src: "{% for i in range(100000) %}{{ 'x'*1000 }}{% endfor %}", want: "output size limit"},
		{name: "set block output", src: "{% set s %}{% for i in range(100000) %}{{ 'x'*1000 }}{% endfor %}{% endset %}", want: "output size limit"},
		{name: "allocation churn", src: "{% for i in range(100000) %}{% set x = 'y'*1000000 %}{% endfor %}", want: "allocation limit"},
		{name: "recursive macro", src: "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", want: "recursion depth limit"},
		{name: "mutually recursive macros", src: "{% macro a(n) %}{{ b(n) }}{% endmacro %}{% macro b(n) %}{{ a(n) }}{% endmacro %}{{ a(0) }}", want: "recursion depth limit"},
		{name: "recursive caller", src: "{% macro f() %}{{ caller() }}{% endmacro %}{% macro g() %}{% call f() %}{{ g() }}{% endcall %}{% endmacro %}{{ g() }}", want: "recursion depth limit"},
		{name: "list holding itself printed", src: "{% set l = [] %}{% set _ = l.append(l) %}{{ l }}", want: "recursion depth limit"},
		{name: "list holding itself tojson", src: "{% set l = [] %}{% set _ = l.append(l) %}{{ l|tojson }}", want: "recursion depth limit"},
		{name: "list holding itself compared", src: "{% set l = [] %}{% set _ = l.append(l) %}{% set m = [] %}{% set _ = m.append(m) %}{{ l == m }}", want: "recursion depth limit"},
		{name: "list holding itself joined", src: "{% set l = [] %}{% set _ = l.append(l) %}{{ [l]|join }}", want: "recursion depth limit"},
		{name: "list holding itself as key", src: "{% set l = [] %}{% set _ = l.append(l) %}{{ {l: 1} }}", want: "recursion depth limit"},
		{name: "shared list printed", src: "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}", want: "value size limit"},
		{name: "shared list tojson", src: "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l|tojson }}", want: "value size limit"},
		{name: "shared list compared", src: "{% set ns = namespace(l=[1], m=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% set ns.m = [ns.m, ns.m] %}{% endfor %}{{ ns.l == ns.m }}", want: "step limit"},
		{name: "shared list unique", src: "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ [ns.l]|unique|length }}", want: "value size limit"},
		{name: "deep list printed", src: "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}", want: "recursion depth limit"},
		{name: "append loop", src: "{% set l = [] %}{% for i in range(1000000) %}{% set _ = l.append('x'*100) %}{% endfor %}", want: "value size limit"},
		{name: "brackets 300k", src: "{{ " + r("[", 300000) + r("]", 300000) + " }}", want: "parse nesting depth limit"},
		{name: "brackets 300k unclosed", src: "{{ " + r("[", 300000) + " }}", want: "parse nesting depth limit"},
		{name: "parens 1M", src: "{{ " + r("(", 1000000) + "1" + r(")", 1000000) + " }}", want: "source size limit"},
		{name: "parens 1M no source limit", lim: noSource, src: "{{ " + r("(", 1000000) + "1" + r(")", 1000000) + " }}", want: "parse nesting depth limit"},
		{name: "sum 5M terms", src: "{{ 1" + r("+1", 5000000) + " }}", want: "source size limit"},
		{name: "sum 5M terms no source limit", lim: noSource, src: "{{ 1" + r("+1", 5000000) + " }}", want: "parse nesting depth limit"},
		{name: "filter chain", src: "{{ 'x'" + r("|trim", 100000) + " }}", want: "parse nesting depth limit"},
		{name: "not chain", src: "{{ " + r("not ", 100000) + "1 }}", want: "parse nesting depth limit"},
		{name: "minus chain", src: "{{ " + r("-", 100000) + "1 }}", want: "parse nesting depth limit"},
		{name: "ternary chain", src: "{{ " + r("1 if 0 else ", 50000) + "2 }}", want: "parse nesting depth limit"},
		{name: "nested if 40k", src: r("{% if true %}", 40000) + "x" + r("{% endif %}", 40000), want: "parse nesting depth limit"},
		{name: "nested for 30k", src: r("{% for i in [1] %}", 30000) + "x" + r("{% endfor %}", 30000), want: "parse nesting depth limit"},
		{name: "steps with unlimited values", lim: jinja.Limits{MaxValue: -1, MaxAlloc: -1}, src: "{% for i in range(100000000) %}{% endfor %}", want: "step limit"},
		{name: "deadline", lim: jinja.Limits{MaxSteps: -1}, src: "{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(1000) %}{% endfor %}{% endfor %}{% endfor %}",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 50*time.Millisecond)
			}, want: "context deadline exceeded"},
		{name: "modest template renders", src: "{% for m in range(3) %}<{{ m }}|{{ ['a', 'b']|join('-') }}|{{ {'k': m}|tojson }}>{% endfor %}", out: `<0|a-b|{"k": 0}><1|a-b|{"k": 1}><2|a-b|{"k": 2}>`},
	}
}

// runHostile compiles and renders src in a goroutine, so that a hang
// fails the test instead of stalling it, and measures time and bytes
// allocated.
func runHostile(t *testing.T, c hostileCase) (string, error, time.Duration, uint64) {
	t.Helper()
	type result struct {
		out string
		err error
	}
	ctx, cancel := context.Background(), func() {}
	if c.ctx != nil {
		ctx, cancel = c.ctx()
	}
	defer cancel()
	done := make(chan result, 1)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	go func() {
		tmpl, err := jinja.CompileLimits(c.src, c.lim)
		if err != nil {
			done <- result{err: err}
			return
		}
		out, err := tmpl.RenderContext(ctx, nil, c.lim)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		return r.out, r.err, elapsed, after.TotalAlloc - before.TotalAlloc
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still running after 20 s", c.name)
		return "", nil, 0, 0
	}
}

func TestHostileTemplates(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			out, err, elapsed, alloc := runHostile(t, c)
			t.Logf("%v, %.1f MB allocated: %v", elapsed.Round(time.Millisecond), float64(alloc)/(1<<20), err)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("error %v, want it to render", err)
			case c.want == "" && c.out != "" && out != c.out:
				t.Errorf("rendered %q, want %q", out, c.out)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
			if elapsed > hostileTime {
				t.Errorf("took %v, want under %v", elapsed, hostileTime)
			}
			if alloc > hostileAlloc {
				t.Errorf("allocated %d MB, want under %d MB", alloc>>20, hostileAlloc>>20)
			}
		})
	}
}

// TestLimitErrors pins the error: it names the limit and its value, and
// matches ErrLimit and *LimitError.
func TestLimitErrors(t *testing.T) {
	tmpl, err := jinja.Compile("{% for i in range(100) %}{{ i }}{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.RenderContext(context.Background(), nil, jinja.Limits{MaxSteps: 50})
	if err == nil || err.Error() != "template: step limit (50) exceeded" {
		t.Fatalf("error %v, want \"template: step limit (50) exceeded\"", err)
	}
	var lim *jinja.LimitError
	if !errors.Is(err, jinja.ErrLimit) || !errors.As(err, &lim) || lim.Limit != "step" || lim.Max != 50 {
		t.Errorf("error %#v does not match ErrLimit / *LimitError{step, 50}", err)
	}
	// Negative: no limit.
	if out, err := tmpl.RenderContext(context.Background(), nil, jinja.Limits{MaxSteps: -1}); err != nil || !strings.HasSuffix(out, "99") {
		t.Errorf("unlimited: %q, %v", out, err)
	}
	// The old API applies the defaults.
	tmpl, _ = jinja.Compile("{{ 'x'*2000000000 }}")
	if _, err := tmpl.Render(nil); !errors.Is(err, jinja.ErrLimit) {
		t.Errorf("Render: %v, want a limit error", err)
	}
	// A context done before the render starts stops it at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tmpl.RenderContext(ctx, nil, jinja.Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// TestDeepNestingParsesLinearly: nesting just under the limit parses in
// time linear in its depth (deep recursion made the garbage collector
// rescan the whole stack over and over: [[[…]]] 300k deep took minutes).
func TestDeepNestingParsesLinearly(t *testing.T) {
	lim := jinja.Limits{MaxParseDepth: 400}
	src := "{{ " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + " }}"
	start := time.Now()
	for range 100 {
		if _, err := jinja.CompileLimits(src, lim); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("100 parses of 100-deep brackets took %v", d)
	}
}
