package jinja

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// vkchat patch (NOTE-UPSTREAM.md §3): limits for rendering templates that
// come from untrusted model files.

// Limits bound what compiling and rendering one template may consume. A
// zero field takes its DefaultLimits value; a negative one means no limit.
// Every limit that is hit ends the render with a *LimitError naming it,
// before the work or the allocation that would exceed it is done.
type Limits struct {
	// MaxSteps bounds evaluation steps: expression evaluations, loop
	// iterations and statements, plus one step per KiB a filter or
	// operator scans or builds.
	MaxSteps int64
	// MaxOutput bounds the bytes of rendered output; each {% set %} block,
	// macro, caller and filter block body is bounded by it too.
	MaxOutput int64
	// MaxValue bounds the size of any one value a template builds: bytes
	// of a string (or of a list or dict when printed or serialised), and
	// 24 bytes per item of a list. It is checked before allocating.
	MaxValue int64
	// MaxAlloc bounds the total bytes of strings, lists and output a
	// render builds, so a loop cannot churn through memory.
	MaxAlloc int64
	// MaxDepth bounds recursion at render time: nested evaluation,
	// macro and caller calls, and the nesting of values that are
	// printed, compared or serialised.
	MaxDepth int
	// MaxParseDepth bounds nesting at compile time: brackets, operator
	// chains and nested blocks.
	MaxParseDepth int
	// MaxSource bounds the template source in bytes at compile time.
	MaxSource int64
}

// DefaultLimits are the limits Compile and Render apply. They are far
// above what chat templates need (a few thousand steps and a prompt's
// worth of output) and far below what would exhaust a machine.
func DefaultLimits() Limits {
	return Limits{
		MaxSteps:      2_000_000,
		MaxOutput:     16 << 20,
		MaxValue:      16 << 20,
		MaxAlloc:      128 << 20,
		MaxDepth:      1000,
		MaxParseDepth: 500,
		MaxSource:     1 << 20,
	}
}

// normalize fills zero fields with defaults.
func (l Limits) normalize() Limits {
	d := DefaultLimits()
	if l.MaxSteps == 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.MaxOutput == 0 {
		l.MaxOutput = d.MaxOutput
	}
	if l.MaxValue == 0 {
		l.MaxValue = d.MaxValue
	}
	if l.MaxAlloc == 0 {
		l.MaxAlloc = d.MaxAlloc
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxParseDepth == 0 {
		l.MaxParseDepth = d.MaxParseDepth
	}
	if l.MaxSource == 0 {
		l.MaxSource = d.MaxSource
	}
	return l
}

// ErrLimit matches every *LimitError with errors.Is.
var ErrLimit = errors.New("template: limit exceeded")

// LimitError is a limit a template exceeded: "template: step limit
// (2000000) exceeded".
type LimitError struct {
	Limit string // "step", "output size", "value size", "allocation", "recursion depth", "parse nesting depth", "source size"
	Max   int64
}

func (e *LimitError) Error() string {
	return "template: " + e.Limit + " limit (" + strconv.FormatInt(e.Max, 10) + ") exceeded"
}

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// =============================================================================

// guard is one render's account of its limits. Every evaluator of the
// render (macro bodies, set blocks, callers) shares it.
type guard struct {
	lim   Limits
	done  <-chan struct{}
	ctx   context.Context
	steps int64
	work  int64 // units of work not yet turned into steps
	tick  int64 // steps since the context was last polled
	alloc int64
	depth int
	err   error // the first limit hit; every later check returns it
}

// workPerStep: scanning or building 1 KiB costs one step.
const workPerStep = 1024

// valueItemBytes is what a list item or dict entry counts for in MaxValue
// and MaxAlloc (the size of a Value).
const valueItemBytes = 24

func newGuard(ctx context.Context, lim Limits) *guard {
	if ctx == nil {
		ctx = context.Background()
	}
	return &guard{lim: lim.normalize(), done: ctx.Done(), ctx: ctx}
}

// defaultGuard serves callers outside a render (Callable.Fn called
// directly, Value.String): default limits, no deadline.
func defaultGuard() *guard { return newGuard(context.Background(), DefaultLimits()) }

func (g *guard) fail(name string, max int64) error {
	if g.err == nil {
		g.err = &LimitError{Limit: name, Max: max}
	}
	return g.err
}

// step counts one evaluation step.
func (g *guard) step() error { return g.stepN(1) }

func (g *guard) stepN(n int64) error {
	if g.err != nil {
		return g.err
	}
	g.steps += n
	if g.lim.MaxSteps >= 0 && g.steps > g.lim.MaxSteps {
		return g.fail("step", g.lim.MaxSteps)
	}
	if g.done != nil {
		g.tick += n
		if g.tick >= 256 {
			g.tick = 0
			select {
			case <-g.done:
				if g.err == nil {
					g.err = fmt.Errorf("template: render stopped: %w", context.Cause(g.ctx))
				}
				return g.err
			default:
			}
		}
	}
	return nil
}

// scan counts n units of work (bytes scanned or built, 16 per value
// visited) towards the step limit.
func (g *guard) scan(n int64) error {
	if n <= 0 {
		return g.err
	}
	g.work += n
	if g.work < workPerStep {
		return g.err
	}
	s := g.work / workPerStep
	g.work %= workPerStep
	return g.stepN(s)
}

// grow accounts for building a value of n bytes; call it before
// allocating.
func (g *guard) grow(n int64) error {
	if g.err != nil {
		return g.err
	}
	if n < 0 || (g.lim.MaxValue >= 0 && n > g.lim.MaxValue) {
		return g.fail("value size", g.lim.MaxValue)
	}
	return g.charge(n)
}

// growItems is grow for count items of unit bytes, safe from overflow.
func (g *guard) growItems(count, unit int64) error {
	if count <= 0 || unit <= 0 {
		return g.err
	}
	if g.lim.MaxValue >= 0 && count > g.lim.MaxValue/unit {
		return g.fail("value size", g.lim.MaxValue)
	}
	if count > (1<<62)/unit {
		return g.fail("value size", g.lim.MaxValue)
	}
	return g.grow(count * unit)
}

// charge counts n bytes towards the allocation limit without the
// per-value check (output written to a builder).
func (g *guard) charge(n int64) error {
	if g.err != nil {
		return g.err
	}
	g.alloc += n
	if g.lim.MaxAlloc >= 0 && g.alloc > g.lim.MaxAlloc {
		return g.fail("allocation", g.lim.MaxAlloc)
	}
	return g.scan(n)
}

// checkValue is the after-the-fact check on any value an expression
// produced (the operations that could build a large value check first).
func (g *guard) checkValue(v Value) error {
	if g.lim.MaxValue < 0 {
		return nil
	}
	var n int64
	switch v.kind {
	case KindString:
		n = int64(len(v.AsString()))
	case KindList:
		n = int64(v.AsList().Len()) * valueItemBytes
	case KindDict:
		n = int64(v.AsDict().Len()) * valueItemBytes
	default:
		return nil
	}
	if n > g.lim.MaxValue {
		return g.fail("value size", g.lim.MaxValue)
	}
	return nil
}

func (g *guard) enter() error {
	g.depth++
	if g.lim.MaxDepth >= 0 && g.depth > g.lim.MaxDepth {
		g.depth--
		return g.fail("recursion depth", int64(g.lim.MaxDepth))
	}
	return nil
}

func (g *guard) leave() { g.depth-- }

// str is printValue under the limits: lists and dicts are printed by a
// writer that stops at MaxValue and MaxDepth.
func (g *guard) str(v Value) (string, error) {
	if v.kind != KindList && v.kind != KindDict {
		return printValue(v), nil
	}
	w := reprWriter{g: g, max: g.lim.MaxValue, maxDepth: g.lim.MaxDepth}
	if err := w.value(v, 0); err != nil {
		return "", err
	}
	if err := g.charge(int64(w.b.Len())); err != nil {
		return "", err
	}
	return w.b.String(), nil
}

// reprWriter writes Value.String's Python-style representation, failing
// (or, without a guard, stopping) once it would exceed max bytes or
// maxDepth levels.
type reprWriter struct {
	g        *guard // nil: stop silently (Value.String)
	b        strings.Builder
	max      int64
	maxDepth int
	stopped  bool
}

var errReprStop = errors.New("repr stopped")

func (w *reprWriter) write(s string) error {
	if w.max >= 0 && int64(w.b.Len())+int64(len(s)) > w.max {
		if w.g != nil {
			return w.g.fail("value size", w.max)
		}
		w.stopped = true
		return errReprStop
	}
	w.b.WriteString(s)
	return nil
}

func (w *reprWriter) value(v Value, depth int) error {
	if w.maxDepth >= 0 && depth > w.maxDepth {
		if w.g != nil {
			return w.g.fail("recursion depth", int64(w.maxDepth))
		}
		w.stopped = true
		return errReprStop
	}
	if w.g != nil {
		if err := w.g.scan(16); err != nil {
			return err
		}
	}
	switch v.kind {
	case KindString:
		if err := w.write("'"); err != nil {
			return err
		}
		if err := w.write(v.AsString()); err != nil {
			return err
		}
		return w.write("'")
	case KindList:
		if err := w.write("["); err != nil {
			return err
		}
		for i, item := range v.AsList().Items {
			if i > 0 {
				if err := w.write(", "); err != nil {
					return err
				}
			}
			if err := w.value(item, depth+1); err != nil {
				return err
			}
		}
		return w.write("]")
	case KindDict:
		d := v.AsDict()
		if err := w.write("{"); err != nil {
			return err
		}
		for i, key := range d.Keys {
			if i > 0 {
				if err := w.write(", "); err != nil {
					return err
				}
			}
			if err := w.write("'" + key + "': "); err != nil {
				return err
			}
			if err := w.value(d.Data[key], depth+1); err != nil {
				return err
			}
		}
		return w.write("}")
	}
	return w.write(v.scalarString())
}

// equal is valuesEqual under the limits: comparing nested values counts
// towards the step limit and fails past MaxDepth.
func (g *guard) equal(a, b Value) (bool, error) {
	if a.IsNumber() && b.IsNumber() {
		return toFloat64(a) == toFloat64(b), nil
	}
	if a.IsNone() && b.IsNone() {
		return true, nil
	}
	return g.equalDepth(a, b, 0)
}

func (g *guard) equalDepth(a, b Value, depth int) (bool, error) {
	if a.kind != b.kind {
		return false, nil
	}
	switch a.kind {
	case KindList, KindDict:
	case KindString:
		return a.AsString() == b.AsString(), g.scan(int64(len(a.AsString())))
	default:
		return a.Equals(b), nil
	}
	if g.lim.MaxDepth >= 0 && depth > g.lim.MaxDepth {
		return false, g.fail("recursion depth", int64(g.lim.MaxDepth))
	}
	if err := g.scan(64); err != nil {
		return false, err
	}
	if a.kind == KindList {
		x, y := a.AsList(), b.AsList()
		if x.Len() != y.Len() {
			return false, nil
		}
		for i := range x.Items {
			eq, err := g.equalDepth(x.Items[i], y.Items[i], depth+1)
			if err != nil || !eq {
				return false, err
			}
		}
		return true, nil
	}
	x, y := a.AsDict(), b.AsDict()
	if x.Len() != y.Len() {
		return false, nil
	}
	for _, key := range x.Keys {
		bv, ok := y.Get(key)
		if !ok {
			return false, nil
		}
		eq, err := g.equalDepth(x.Data[key], bv, depth+1)
		if err != nil || !eq {
			return false, err
		}
	}
	return true, nil
}

// contains is containsValue under the limits.
func (g *guard) contains(container, item Value) (bool, error) {
	if container.IsList() {
		for _, v := range container.AsList().Items {
			eq, err := g.equalDepth(v, item, 0)
			if err != nil || eq {
				return eq, err
			}
		}
		return false, nil
	}
	if container.IsString() && item.IsString() {
		if err := g.scan(int64(len(container.AsString()))); err != nil {
			return false, err
		}
	}
	return containsValue(container, item), nil
}

// checkReplace sizes strings.Replace(s, old, new, count) before it runs.
func (g *guard) checkReplace(s, old, new string, count int) error {
	if err := g.scan(int64(len(s))); err != nil {
		return err
	}
	n := int64(strings.Count(s, old))
	if count >= 0 && int64(count) < n {
		n = int64(count)
	}
	growth := int64(len(new)) - int64(len(old))
	if n == 0 || growth <= 0 {
		return g.grow(int64(len(s)))
	}
	if g.lim.MaxValue >= 0 && n > (g.lim.MaxValue-int64(len(s)))/growth+1 {
		return g.fail("value size", g.lim.MaxValue)
	}
	return g.grow(int64(len(s)) + n*growth)
}

// appendItem checks that a list of n items may grow by one.
func (g *guard) appendItem(n int) error {
	if g.lim.MaxValue >= 0 && int64(n+1)*valueItemBytes > g.lim.MaxValue {
		return g.fail("value size", g.lim.MaxValue)
	}
	return g.charge(valueItemBytes)
}

// text is str for filters that work on their input's text: it also
// counts scanning that text.
func (g *guard) text(v Value) (string, error) {
	s, err := g.str(v)
	if err == nil {
		err = g.scan(int64(len(s)))
	}
	return s, err
}

// escapedLen is the length of s after HTML escaping.
func escapedLen(s string) int64 {
	n := int64(len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&', '\'':
			n += 4 // &amp; &#39;
		case '"':
			n += 5 // &quot;
		case '<', '>':
			n += 3
		}
	}
	return n
}

// outBuf collects output in chunks joined once at the end: a builder
// that grows by 1.25x past 256 KiB allocates about five times what it
// finally holds, this about twice.
type outBuf struct {
	parts []string
	cur   strings.Builder
	n     int
}

const outChunk = 64 << 10

func (o *outBuf) WriteString(s string) {
	o.n += len(s)
	if o.cur.Len()+len(s) <= outChunk {
		o.cur.WriteString(s)
		return
	}
	o.flush()
	if len(s) >= outChunk {
		o.parts = append(o.parts, s) // strings are immutable: no copy
		return
	}
	o.cur.WriteString(s)
}

func (o *outBuf) flush() {
	if o.cur.Len() > 0 {
		o.parts = append(o.parts, o.cur.String())
		o.cur = strings.Builder{}
	}
}

func (o *outBuf) Len() int { return o.n }

func (o *outBuf) String() string {
	if len(o.parts) == 0 {
		return o.cur.String()
	}
	o.flush()
	return strings.Join(o.parts, "")
}
