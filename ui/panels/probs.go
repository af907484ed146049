package panels

import (
	"fmt"
	"math"

	"vkchat/runtime/sample"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Probs is one next-token distribution to show.
type Probs struct {
	Title      string // where it comes from: the last step, a preview, an inspected step
	Candidates []sample.Candidate
	Chosen     int32 // the token that was (or would be) sampled
	HasChosen  bool
	Entropy    float32
	// Text returns a candidate's raw piece; it is made visible here.
	Text func(id int32) string
	// Empty is shown instead of candidates when there are none.
	Empty string
	// Cursor marks the candidate the inspector would fork with (Enter),
	// when HasCursor.
	Cursor    int
	HasCursor bool
	// Draft is the speculative draft at this step, nil where none was
	// verified.
	Draft *Draft
}

// Draft is what a draft source proposed at a step and its fate:
// "accepted" (the target drew the same), "corrected" (the target drew
// another in its place), "bonus" (no draft: the last row of a round whose
// drafts were all kept). Candidates is the source's own distribution
// (nil for n-gram lookup), shown beside the target's.
type Draft struct {
	Source, Fate string
	Token        int32
	Candidates   []sample.Candidate
}

// line says in a row what speculation did at the step.
func (d *Draft) line(p Probs) string {
	tok := func(id int32) string { return "\"" + termtext.Visible(p.textOf(id)) + "\"" }
	src := map[string]string{"draft": "draft model", "ngram": "n-gram", "mtp": "MTP head"}[d.Source]
	if src == "" {
		src = termtext.Visible(d.Source)
	}
	switch d.Fate {
	case "accepted":
		return fmt.Sprintf("%s drafted %s: accepted", src, tok(d.Token))
	case "corrected":
		return fmt.Sprintf("%s drafted %s ✗ rejected", src, tok(d.Token))
	}
	return fmt.Sprintf("%s: bonus (every draft kept)", src)
}

// prob is the draft source's probability of id, and whether it listed it.
func (d *Draft) prob(id int32) (float32, bool) {
	for _, c := range d.Candidates {
		if c.ID == id {
			return c.Prob, true
		}
	}
	return 0, false
}

func (p Probs) textOf(id int32) string {
	if p.Text == nil {
		return fmt.Sprintf("#%d", id)
	}
	return p.Text(id)
}

// EntropyBits converts an entropy in nats (how the sampler reports it) to
// bits, the unit of every entropy and surprisal on screen.
func EntropyBits(nats float32) float64 { return float64(nats) / math.Ln2 }

// TokenLabel is a candidate's piece with whitespace and control bytes
// made visible, followed by its token ID where another candidate looks
// the same (a byte token and a word token can both be "I").
func (p Probs) TokenLabel(id int32) string {
	text, tag := p.tokenLabel(id)
	return text + tag
}

// tokenLabel is TokenLabel in two parts: the visible text, and the " #ID"
// that tells it from a candidate that looks the same ("" when none does).
func (p Probs) tokenLabel(id int32) (text, tag string) {
	if p.Text == nil {
		return fmt.Sprintf("#%d", id), ""
	}
	text = termtext.Visible(p.Text(id))
	if p.LooksLikeAnother(id) {
		tag = fmt.Sprintf(" #%d", id)
	}
	return text, tag
}

// LooksLikeAnother reports whether another candidate shows the same text
// as token id: only their IDs tell them apart.
func (p Probs) LooksLikeAnother(id int32) bool {
	if p.Text == nil {
		return false
	}
	text := termtext.Visible(p.Text(id))
	for _, c := range p.Candidates {
		if c.ID != id && termtext.Visible(p.Text(c.ID)) == text {
			return true
		}
	}
	return false
}

// probColumns decides which columns fit in width cells.
type probColumns struct {
	tok, bar          int
	showFull, showLog bool
	draft             bool // a column with the draft source's probability
}

func layoutProbs(width int) probColumns {
	c := probColumns{tok: min(max(width/4, 6), 14), showFull: true, showLog: true}
	rest := func() int {
		w := width - 2 - c.tok - 1 - 6
		if c.showFull {
			w -= 7
		}
		if c.showLog {
			w -= 8
		}
		return w - 1
	}
	if rest() < 6 {
		c.showFull = false
	}
	if rest() < 4 {
		c.showLog = false
	}
	c.bar = max(rest(), 0)
	return c
}

// ProbsLines renders the distribution in at most maxRows rows: a title
// with the entropy, a column header, then one bar per candidate, most
// likely first. The bar and "drawn" are the probability after the sampler
// settings (what the token was drawn with), "model" is the model's own
// probability before them. The sampled token is marked "●"; candidates the
// sampler cut are dimmed and name the stage that cut them (top-k, top-p,
// min-p) where their drawn probability would be.
func ProbsLines(st theme.Styles, p Probs, width, maxRows int) []string {
	if maxRows <= 0 {
		return nil
	}
	title := st.Value.Render(p.Title)
	if len(p.Candidates) > 0 {
		h := fmt.Sprintf("H %.2f bits", EntropyBits(p.Entropy))
		gap := width - termtext.Width(p.Title) - len(h)
		if gap >= 1 {
			title += fmt.Sprintf("%*s", gap, "") + st.Label.Render(h)
		}
	}
	lines := []string{title}
	if p.Draft != nil && maxRows > 2 {
		lines = append(lines, st.Label.Render(termtext.Truncate(p.Draft.line(p), width)))
	}
	if len(p.Candidates) == 0 {
		if p.Empty != "" && maxRows > 1 {
			lines = append(lines, st.Dim.Render(p.Empty))
		}
		return lines
	}
	c := layoutProbs(width)
	if c.draft = p.Draft != nil && len(p.Draft.Candidates) > 0 && c.bar >= 9; c.draft {
		c.bar -= 7
	}
	hdr := "  " + termtext.Fit("token", c.tok) + " " + termtext.Fit("", c.bar) + fmt.Sprintf(" %6s", "drawn")
	if c.draft {
		hdr += fmt.Sprintf(" %6s", "draft")
	}
	if c.showFull {
		hdr += fmt.Sprintf(" %6s", "model")
	}
	if c.showLog {
		hdr += fmt.Sprintf(" %7s", "logit")
	}
	lines = append(lines, st.Label.Render(hdr))
	// Keep the cursor's row in view when the list is longer than the panel.
	from := 0
	if head := len(lines); p.HasCursor && p.Cursor >= maxRows-head {
		from = p.Cursor - (maxRows - head) + 1
	}
	for i, cand := range p.Candidates[min(from, len(p.Candidates)):] {
		if len(lines) >= maxRows {
			break
		}
		lines = append(lines, probRow(st, p, cand, c, p.HasCursor && from+i == p.Cursor))
	}
	return lines
}

// CutLabel names the stage that cut a candidate, "cut" when unknown.
func CutLabel(c sample.Candidate) string {
	if c.CutBy != sample.StageNone {
		return c.CutBy.String()
	}
	return "cut"
}

func probRow(st theme.Styles, p Probs, cand sample.Candidate, c probColumns, cursor bool) string {
	sampled := p.HasChosen && cand.ID == p.Chosen
	// A long text gives way to the ID that tells it from a look-alike.
	text, tag := p.tokenLabel(cand.ID)
	tok := termtext.Fit(termtext.Truncate(text, max(c.tok-termtext.Width(tag), 1))+tag, c.tok)
	nums := fmt.Sprintf(" %6s", Percent(cand.Final))
	if cand.Cut {
		nums = fmt.Sprintf(" %6s", CutLabel(cand))
	}
	if c.draft {
		dp := "·"
		if q, ok := p.Draft.prob(cand.ID); ok {
			dp = Percent(q)
		}
		nums += fmt.Sprintf(" %6s", dp)
	}
	if c.showFull {
		nums += fmt.Sprintf(" %6s", Percent(cand.Prob))
	}
	if c.showLog {
		nums += fmt.Sprintf(" %7.2f", cand.Logit)
	}
	lead := ""
	if cursor {
		// The inspector's fork cursor: Enter continues the reply with this token.
		lead = st.Selected.Render("▸")
	}
	if cand.Cut {
		if cursor {
			return lead + st.Cut.Render(" "+tok+" "+termtext.Fit("", c.bar)+nums)
		}
		return st.Cut.Render("  " + tok + " " + termtext.Fit("", c.bar) + nums)
	}
	mark := "  "
	switch {
	case !sampled && p.Draft != nil && p.Draft.Fate == "corrected" && cand.ID == p.Draft.Token:
		// the draft the target's draw replaced
		mark = st.Cut.Render("✗ ")
		if cursor {
			mark = " "
		}
	case sampled:
		// On the token the reply has, the cursor needs no mark of its own:
		// forking there would change nothing.
		mark, lead = st.Sampled.Render("● "), ""
		tok = st.Sampled.Render(tok)
	case cursor:
		mark = " "
	}
	return lead + mark + tok + " " + Bar(st, float64(cand.Final), c.bar) + st.Value.Render(nums)
}
