package chat

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/ardanlabs/jinja"
)

// fit finds, for each hole, which form of its message's content the true
// render holds there, such that literals and contents make up truth
// exactly. It searches depth-first, remembering dead ends, because a
// literal can also occur inside content.
//
// Templates that strip a string built from markup and content (Llama 2
// style) strip into the markup when the content is blank, so a literal
// may also lose whitespace on the side where it meets blank content. Only
// whitespace is ever in doubt: every other byte must match a literal or a
// content form exactly.
//
// The fit is part of the render, so it runs under the same bounds: it
// stops when ctx is done and fails past Limits.MaxSteps (a step per state
// tried and per KiB compared). Its stack is a slice, not Go's: a template
// that prints a message hundreds of thousands of times makes that many
// holes, deep enough to exhaust a goroutine's stack by recursion.
// ok is false when the renders do not fit; err says why the search stopped.
func fit(ctx context.Context, truth string, lits []string, refs []int, msgs []Message) (segs []Segment, ok bool, err error) {
	f := fitter{truth: truth, lits: lits, refs: refs, msgs: msgs,
		forms: make([][]string, len(msgs)), blank: make([]int8, len(msgs)),
		dead: map[fitState]bool{}}
	f.budget.init(ctx)
	path, err := f.search()
	if path == nil || err != nil {
		return nil, false, err
	}
	var s segments
	for j, fr := range path {
		s.text(fr.lit)
		if j < len(refs) {
			s.content(fr.pick)
		}
	}
	return s.list(), true, nil
}

type fitState struct {
	j, pos     int
	afterBlank bool
}

type fitter struct {
	truth  string
	lits   []string
	refs   []int
	msgs   []Message
	forms  [][]string // contentForms per message, made when first needed
	blank  []int8     // isBlank per message: 0 not yet known, 1 blank, 2 not
	dead   map[fitState]bool
	budget fitBudget
}

// fitFrame is literal j being tried at pos: which of its forms (li) and,
// for the form chosen, which content form of hole j (ci) come next.
type fitFrame struct {
	st     fitState
	lforms []literalForm
	li     int
	lit    string   // the literal form chosen
	end    int      // where the literal form chosen ends
	cforms []string // what hole j may hold after it
	ci     int
	pick   string // the content form chosen, when a frame for j+1 is above
}

// search returns the frames of a fit, one per literal, or nil when there
// is none.
func (f *fitter) search() ([]fitFrame, error) {
	var stack []fitFrame
	push := func(st fitState) {
		nextBlank := st.j < len(f.refs) && f.isBlank(f.refs[st.j])
		stack = append(stack, fitFrame{st: st, lforms: literalForms(f.lits[st.j], st.afterBlank, nextBlank)})
	}
	push(fitState{0, 0, false})
	for len(stack) > 0 {
		fr := &stack[len(stack)-1]
		if fr.ci < len(fr.cforms) {
			c := fr.cforms[fr.ci]
			fr.ci++
			if err := f.budget.step(len(c)); err != nil {
				return nil, err
			}
			next := fitState{fr.st.j + 1, fr.end + len(c), isBlank(c)}
			if strings.HasPrefix(f.truth[fr.end:], c) && !f.dead[next] {
				fr.pick = c
				push(next)
			}
			continue
		}
		if fr.li < len(fr.lforms) {
			form := fr.lforms[fr.li]
			fr.li++
			fr.cforms, fr.ci = nil, 0
			if err := f.budget.step(len(form.text)); err != nil {
				return nil, err
			}
			if !strings.HasPrefix(f.truth[fr.st.pos:], form.text) {
				continue
			}
			fr.lit, fr.end = form.text, fr.st.pos+len(form.text)
			switch j := fr.st.j; {
			case j == len(f.refs):
				if fr.end == len(f.truth) {
					return stack, nil
				}
			case form.needsBlankNext:
				fr.cforms = []string{""}
			default:
				fr.cforms = f.contentForms(f.refs[j])
			}
			continue
		}
		f.dead[fr.st] = true
		stack = stack[:len(stack)-1]
	}
	return nil, nil
}

func (f *fitter) contentForms(i int) []string {
	if f.forms[i] == nil {
		f.forms[i] = contentForms(f.msgs[i].Content)
	}
	return f.forms[i]
}

func (f *fitter) isBlank(i int) bool {
	if f.blank[i] == 0 {
		f.blank[i] = 2
		if isBlank(f.msgs[i].Content) {
			f.blank[i] = 1
		}
	}
	return f.blank[i] == 1
}

// fitBudget holds a fit to Limits.MaxSteps, counted as the template
// engine counts (a step per state and per KiB compared), and polls ctx.
type fitBudget struct {
	ctx        context.Context
	max, steps int64
	work, tick int64
}

func (b *fitBudget) init(ctx context.Context) {
	if ctx == nil {
		ctx = context.Background()
	}
	b.ctx = ctx
	b.max = Limits.MaxSteps
	if b.max == 0 {
		b.max = jinja.DefaultLimits().MaxSteps
	}
}

// step counts one state tried and n bytes compared.
func (b *fitBudget) step(n int) error {
	b.work += int64(n)
	s := 1 + b.work/1024
	b.work %= 1024
	b.steps += s
	if b.max >= 0 && b.steps > b.max {
		return fmt.Errorf("fitting message content into the render: %w", &jinja.LimitError{Limit: "step", Max: b.max})
	}
	if b.tick += s; b.tick >= 256 {
		b.tick = 0
		if err := b.ctx.Err(); err != nil {
			return fmt.Errorf("fitting message content into the render: %w", context.Cause(b.ctx))
		}
	}
	return nil
}

type literalForm struct {
	text           string
	needsBlankNext bool // trailing whitespace was dropped: the next hole must print nothing
}

func literalForms(lit string, afterBlank, nextBlank bool) []literalForm {
	forms := []literalForm{{text: lit}}
	add := func(text string, needsBlankNext bool) {
		for _, f := range forms {
			if f.text == text && f.needsBlankNext == needsBlankNext {
				return
			}
		}
		forms = append(forms, literalForm{text, needsBlankNext})
	}
	if afterBlank {
		add(strings.TrimLeftFunc(lit, isPySpace), false)
	}
	if nextBlank {
		add(strings.TrimRightFunc(lit, isPySpace), true)
		if afterBlank {
			add(strings.TrimFunc(lit, isPySpace), true)
		}
	}
	return forms
}

func isBlank(s string) bool { return strings.TrimFunc(s, isPySpace) == "" }

// contentForms lists what a template may print for content c: itself, or
// c stripped on one or both sides (Jinja's trim and Python's strip, by
// both the engine's and Python's idea of whitespace). Reasoning models'
// templates (Qwen3, DeepSeek-R1) print only the answer of an earlier
// assistant turn — what follows its last </think>, newlines stripped — so
// that tail is a form too. Every form is a substring of c, so whichever
// fits, only message bytes become Content.
func contentForms(c string) []string {
	bases := []string{c}
	if i := strings.LastIndex(c, "</think>"); i >= 0 {
		tail := c[i+len("</think>"):]
		bases = append(bases, tail, strings.TrimLeft(tail, "\n"))
	}
	var forms []string
	add := func(f string) {
		if !contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, b := range bases {
		add(b)
		for _, space := range []func(rune) bool{unicode.IsSpace, isPySpace} {
			add(strings.TrimFunc(b, space))
			add(strings.TrimLeftFunc(b, space))
			add(strings.TrimRightFunc(b, space))
		}
	}
	return forms
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
