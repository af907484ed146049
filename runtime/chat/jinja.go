package chat

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/ardanlabs/jinja"
)

// jinjaTemplate is a model's own chat template, run by the Jinja engine.
//
// A template turns messages into one string, so it cannot say by itself
// which bytes came from message content. We render twice: once as is (the
// prompt the model expects) and once with every content replaced by a
// unique marker. The marker render is the template's markup with holes;
// fitting it against the true render recovers the content bytes, which
// become Content segments. The markers are plain ASCII so that filters a
// template may apply (trim, tojson, escaping) leave them intact, and their
// prefix is chosen to occur in no input. Templates may trim content, so a
// hole may hold the content stripped on either side. When the two renders
// cannot be fitted — say, a template that branches on what a message
// says — rendering fails with ErrSegments rather than guessing, since a
// wrong guess could let content be read as control tokens.
type jinjaTemplate struct {
	src  string
	tmpl *jinja.Template
}

func compileJinja(src string) (j *jinjaTemplate, err error) {
	// The engine runs text from model files; whatever it does with a
	// hostile template must come back as an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("jinja compile panicked: %v", r)
		}
	}()
	t, err := jinja.Compile(src)
	if err != nil {
		return nil, err
	}
	return &jinjaTemplate{src: src, tmpl: t}, nil
}

func (j *jinjaTemplate) text(msgs []Message, gen bool, bos, eos string) (string, error) {
	contents := make([]string, len(msgs))
	for i, m := range msgs {
		contents[i] = m.Content
	}
	return j.exec(msgs, contents, gen, bos, eos)
}

func (j *jinjaTemplate) render(msgs []Message, gen bool, bos, eos string) ([]Segment, error) {
	truth, err := j.text(msgs, gen, bos, eos)
	if err != nil {
		return nil, err
	}
	contents := make([]string, len(msgs))
	mk := newMarker(j.src, bos, eos, msgs)
	for i, m := range msgs {
		// Empty content stays empty: templates test content for
		// truthiness (Phi-3.5 drops an empty system prompt), and it has
		// no bytes to mark anyway.
		if m.Content != "" {
			contents[i] = mk.hole(i)
		}
	}
	shape, err := j.exec(msgs, contents, gen, bos, eos)
	if err != nil {
		return nil, fmt.Errorf("%w: the template fails when content is replaced by a marker: %v", ErrSegments, err)
	}
	lits, refs, ok := mk.split(shape, len(msgs))
	if !ok {
		return nil, fmt.Errorf("%w: the template alters or cuts message content", ErrSegments)
	}
	segs, ok := fit(truth, lits, refs, msgs)
	if !ok {
		return nil, fmt.Errorf("%w: the output depends on message content in a way markers cannot follow", ErrSegments)
	}
	return segs, nil
}

// exec renders with the given content per message.
func (j *jinjaTemplate) exec(msgs []Message, contents []string, gen bool, bos, eos string) (out string, err error) {
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		d.AsDict().Set("role", jinja.NewString(m.Role))
		d.AsDict().Set("content", jinja.NewString(contents[i]))
		list[i] = d
	}
	// Our own raise_exception tells a template's deliberate refusal apart
	// from an engine error, whatever the engine does to the error on the
	// way out.
	var raised *RaiseError
	data := map[string]jinja.Value{
		"messages":              jinja.NewList(list),
		"add_generation_prompt": jinja.NewBool(gen),
		"bos_token":             jinja.NewString(bos),
		"eos_token":             jinja.NewString(eos),
		"raise_exception": jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			raised = &RaiseError{Msg: "the template refused the conversation"}
			if len(args) > 0 {
				raised.Msg = valueText(args[0])
			}
			return jinja.Undefined(), raised
		}),
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("jinja render panicked: %v", r)
		}
	}()
	out, err = j.tmpl.RenderValues(data)
	if raised != nil {
		return "", raised
	}
	return out, err
}

func valueText(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	return v.String()
}

// marker makes the per-message placeholders "<prefix><index>e".
type marker struct{ prefix string }

func newMarker(src, bos, eos string, msgs []Message) marker {
	inputs := []string{src, bos, eos}
	for _, m := range msgs {
		inputs = append(inputs, m.Role, m.Content)
	}
	for n := 0; ; n++ {
		p := fmt.Sprintf("vkc%08xm", n)
		clash := false
		for _, in := range inputs {
			if strings.Contains(in, p) {
				clash = true
				break
			}
		}
		if !clash {
			return marker{prefix: p}
		}
	}
}

func (m marker) hole(i int) string { return fmt.Sprintf("%s%de", m.prefix, i) }

// split cuts a marker render into the literal text around the holes and
// the message index of each hole; len(lits) == len(refs)+1.
func (m marker) split(shape string, n int) (lits []string, refs []int, ok bool) {
	rest := shape
	for {
		at := strings.Index(rest, m.prefix)
		if at < 0 {
			return append(lits, rest), refs, true
		}
		lits = append(lits, rest[:at])
		rest = rest[at+len(m.prefix):]
		digits := 0
		idx := 0
		for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' && digits < 10 {
			idx = idx*10 + int(rest[digits]-'0')
			digits++
		}
		if digits == 0 || digits >= len(rest) || rest[digits] != 'e' || idx >= n {
			return nil, nil, false
		}
		refs = append(refs, idx)
		rest = rest[digits+1:]
	}
}

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
// both the engine's and Python's idea of whitespace).
func contentForms(c string) []string {
	forms := []string{c}
	for _, space := range []func(rune) bool{unicode.IsSpace, isPySpace} {
		for _, f := range []string{
			strings.TrimFunc(c, space),
			strings.TrimLeftFunc(c, space),
			strings.TrimRightFunc(c, space),
		} {
			if !contains(forms, f) {
				forms = append(forms, f)
			}
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
