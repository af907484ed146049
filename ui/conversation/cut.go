package conversation

import "strings"

// CutAnswer leaves out of a reply its answer from the last occurrence of
// stop on: the stop string a reply reached (engine.DoneInfo.Stop) and
// whatever its token wrote after it, as llama.cpp leaves a stop string
// out of its answer, so the next prompt never holds it. The steps keep
// their tokens, their text ranges clamped to what is left; it reports
// whether stop was found.
func (t *Turn) CutAnswer(stop string) bool {
	i := strings.LastIndex(t.Content, stop)
	if stop == "" || i < 0 {
		return false
	}
	n := len(t.Content) - i
	t.Content = t.Content[:i]
	rawLen := len(t.Content)
	if b := t.Think; b != nil && len(b.Raw) >= n {
		b.Raw = b.Raw[:len(b.Raw)-n]
		rawLen = len(b.Raw)
	}
	for k := range t.Steps {
		s := &t.Steps[k]
		s.Start, s.End = min(s.Start, int32(i)), min(s.End, int32(i))
	}
	if d := t.detail; d != nil {
		for k := range d.steps {
			d.steps[k].rawEnd = min(d.steps[k].rawEnd, int32(rawLen))
		}
	}
	return true
}
