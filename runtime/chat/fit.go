package chat

import (
	"strings"
	"unicode"
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
func fit(truth string, lits []string, refs []int, msgs []Message) ([]Segment, bool) {
	f := fitter{truth: truth, lits: lits, refs: refs, msgs: msgs,
		litPicks: make([]string, len(lits)), picks: make([]string, len(refs)),
		dead: map[fitState]bool{}}
	if !f.literal(0, 0, false) {
		return nil, false
	}
	var s segments
	for j := range lits {
		s.text(f.litPicks[j])
		if j < len(refs) {
			s.content(f.picks[j])
		}
	}
	return s, true
}

type fitState struct {
	j, pos     int
	afterBlank bool
}

type fitter struct {
	truth    string
	lits     []string
	refs     []int
	msgs     []Message
	litPicks []string
	picks    []string
	dead     map[fitState]bool
}

// literal matches lits[j] at pos; afterBlank says the hole before it
// printed blank content, which lets the literal's leading whitespace go.
func (f *fitter) literal(j, pos int, afterBlank bool) bool {
	st := fitState{j, pos, afterBlank}
	if f.dead[st] {
		return false
	}
	lit := f.lits[j]
	nextBlank := j < len(f.refs) && isBlank(f.msgs[f.refs[j]].Content)
	for _, form := range literalForms(lit, afterBlank, nextBlank) {
		if !strings.HasPrefix(f.truth[pos:], form.text) {
			continue
		}
		end := pos + len(form.text)
		var ok bool
		switch {
		case j == len(f.refs):
			ok = end == len(f.truth)
		case form.needsBlankNext:
			ok = f.hole(j, end, []string{""})
		default:
			ok = f.hole(j, end, contentForms(f.msgs[f.refs[j]].Content))
		}
		if ok {
			f.litPicks[j] = form.text
			return true
		}
	}
	f.dead[st] = true
	return false
}

func (f *fitter) hole(j, pos int, forms []string) bool {
	for _, c := range forms {
		if strings.HasPrefix(f.truth[pos:], c) && f.literal(j+1, pos+len(c), isBlank(c)) {
			f.picks[j] = c
			return true
		}
	}
	return false
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
