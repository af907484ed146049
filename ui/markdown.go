package ui

import (
	"regexp"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
	"github.com/charmbracelet/lipgloss"
	xansi "github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"vkchat/ui/termtext"
)

// Assistant replies are drawn as Markdown (glamour) while the user reads
// them. The inspector and the heatmap need every generated token at a
// known place on screen, which glamour's re-flowed output cannot give, so
// in those modes a reply falls back to the plain text renderer
// (bodyRender), where each glyph carries the step that produced it.

// minMarkdownWidth is the narrowest body glamour is asked to fill; below
// it tables and code margins leave no room for text, so plain text is
// drawn instead.
const minMarkdownWidth = 16

// markdownRenderer turns Markdown into terminal rows in one fixed style:
// glamour's dark or light theme, chosen from the lipgloss renderer the rest
// of the UI uses (never detected by glamour itself), so what a test renders
// does not depend on the terminal it runs in. With the Ascii profile
// (NO_COLOR, tests) every escape sequence is dropped.
type markdownRenderer struct {
	profile termenv.Profile
	style   ansi.StyleConfig
	byWidth map[int]*glamour.TermRenderer
	renders int // blocks rendered so far, for tests and benchmarks

	// clock, when set, paces the open block of a streaming reply: one
	// that took d to render is not rendered again until debounceFactor×d
	// later (its last rows stand in meanwhile), so a long code block,
	// which costs glamour and chroma tens of milliseconds in colour,
	// takes at most about a fifth of the time however fast tokens come.
	// Blocks under minDebounce are always drawn at once. nil (tests)
	// draws every token.
	clock func() time.Time
}

const (
	debounceFactor = 4
	minDebounce    = 2 * time.Millisecond
	maxDebounce    = 250 * time.Millisecond
)

func newMarkdownRenderer(r *lipgloss.Renderer) *markdownRenderer {
	st := styles.DarkStyleConfig
	if !r.HasDarkBackground() {
		st = styles.LightStyleConfig
	}
	// The transcript indents the body itself, and blocks are separated
	// by the caller, so glamour adds no margin or blank rows of its own.
	zero := uint(0)
	st.Document.Margin = &zero
	st.Document.BlockPrefix, st.Document.BlockSuffix = "", ""
	prof := r.ColorProfile()
	if prof == termenv.Ascii {
		// The cell of padding around inline code is there for its
		// background colour; without colour it reads as a double space.
		st.Code.Prefix, st.Code.Suffix = "", ""
	}
	return &markdownRenderer{profile: prof, style: st, byWidth: map[int]*glamour.TermRenderer{}, clock: time.Now}
}

func (mr *markdownRenderer) renderer(width int) (*glamour.TermRenderer, error) {
	if g, ok := mr.byWidth[width]; ok {
		return g, nil
	}
	g, err := glamour.NewTermRenderer(
		glamour.WithStyles(mr.style),
		glamour.WithWordWrap(width),
		glamour.WithColorProfile(mr.profile),
	)
	if err != nil {
		return nil, err
	}
	if len(mr.byWidth) > 8 {
		// Widths only pile up while a terminal is being resized.
		clear(mr.byWidth)
	}
	mr.byWidth[width] = g
	return g, nil
}

// block renders one Markdown block (see markdownBlocks) into rows at most
// about width cells wide, with blank rows around it removed. An error
// from glamour (none is expected for any input) is reported as ok=false
// so the caller can draw the text plainly.
func (mr *markdownRenderer) block(src string, width int) ([]string, bool) {
	g, err := mr.renderer(width)
	if err != nil {
		return nil, false
	}
	mr.renders++
	out, err := g.Render(src)
	if err != nil {
		return nil, false
	}
	if mr.profile == termenv.Ascii {
		out = xansi.Strip(out)
	}
	rows := strings.Split(out, "\n")
	for i, r := range rows {
		rows[i] = trimPadding(r)
	}
	for len(rows) > 0 && strings.TrimSpace(xansi.Strip(rows[0])) == "" {
		rows = rows[1:]
	}
	for len(rows) > 0 && strings.TrimSpace(xansi.Strip(rows[len(rows)-1])) == "" {
		rows = rows[:len(rows)-1]
	}
	return rows, true
}

// trimPadding drops the padding glamour puts after a row's text: plain
// spaces, and spaces (or nothing) wrapped one cell at a time in a
// foreground colour. Cells with a background colour (a code block's
// shading) are kept.
func trimPadding(row string) string {
	const reset = "\x1b[0m"
	for {
		row = strings.TrimRight(row, " ")
		body, ok := strings.CutSuffix(row, reset)
		if !ok {
			return row
		}
		body = strings.TrimSuffix(body, " ")
		i := strings.LastIndex(body, "\x1b[")
		if i < 0 || !strings.HasSuffix(body, "m") {
			return row
		}
		params := body[i+2 : len(body)-1]
		if strings.Trim(params, "0123456789;") != "" || hasBackground(params) {
			return row
		}
		row = body[:i]
	}
}

// hasBackground reports whether SGR parameters set a background colour.
func hasBackground(params string) bool {
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		switch p := ps[i]; {
		case p == "38" && i+1 < len(ps):
			// a foreground colour: skip its arguments
			if ps[i+1] == "5" {
				i += 2
			} else {
				i += 4
			}
		case p == "48", len(p) == 2 && p[0] == '4' && p[1] <= '7', len(p) == 3 && p[:2] == "10":
			return true
		}
	}
	return false
}

// tableWidth is how wide a table block is drawn: glamour stretches a
// table to the wrap width, so a two-column table would span a wide
// terminal; its source rows' width (plus room for the cell padding)
// keeps it about as wide as written.
func tableWidth(src string, width int) int {
	lines := strings.Split(src, "\n")
	if len(lines) < 2 || !tableDelimiter.MatchString(lines[1]) {
		return width
	}
	w := 0
	for _, l := range lines {
		w = max(w, termtext.Width(l))
	}
	return min(width, w+strings.Count(lines[0], "|")+2)
}

var tableDelimiter = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)

// markdownBlocks splits text into top-level blocks at blank lines that are
// outside fenced code and not followed by an indented line (which would
// continue a list item). Each block renders on its own, so while a reply
// streams only its last, still open block is rendered again.
func markdownBlocks(text string) []string {
	var blocks []string
	var cur []string
	blank := 0 // blank lines seen since the last text line
	fence := ""
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
		}
		cur, blank = nil, 0
	}
	for _, line := range strings.Split(text, "\n") {
		if fence == "" && strings.TrimSpace(line) == "" {
			blank++
			continue
		}
		if blank > 0 {
			if line[0] == ' ' || line[0] == '\t' || fence != "" {
				for ; blank > 0; blank-- {
					cur = append(cur, "")
				}
			} else {
				flush()
			}
		}
		cur = append(cur, line)
		if f := fenceMarker(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimSpace(strings.TrimLeft(line, " "))[len(f):] == "":
				fence = ""
			}
		}
	}
	flush()
	return blocks
}

// fenceMarker returns the run of backticks or tildes that opens or closes a
// fenced code block on line ("" when the line is not a fence).
func fenceMarker(line string) string {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 || len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return ""
	}
	n := 0
	for n < len(l) && l[n] == l[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return l[:n]
}

// markdownCache holds a reply's rendered blocks for one width, so a token
// that extends the last block leaves every earlier block as it was.
type markdownCache struct {
	width  int
	blocks []renderedBlock
	// heldUntil: the open block shows rows older than the text until
	// then (zero when it is up to date).
	heldUntil time.Time
}

type renderedBlock struct {
	src  string
	rows []string
	at   time.Time     // when it was rendered (only with a clock)
	cost time.Duration // how long that took
}

// stale reports whether the open block b may keep its last rows for now.
func (mr *markdownRenderer) stale(b renderedBlock) bool {
	if mr.clock == nil || b.cost < minDebounce {
		return false
	}
	return mr.clock().Sub(b.at) < min(debounceFactor*b.cost, maxDebounce)
}

// markdownRows renders a reply's text as Markdown, reusing every block
// whose source has not changed since the last call; ok is false when
// Markdown cannot be drawn at this width.
func (m *Model) markdownRows(t *turn, width int) ([]string, bool) {
	if width < minMarkdownWidth || m.md == nil {
		return nil, false
	}
	text := strings.ReplaceAll(termtext.Sanitize(t.content), "\t", strings.Repeat(" ", termtext.TabWidth))
	blocks := markdownBlocks(text)
	c := &t.md
	if c.width != width {
		*c = markdownCache{width: width}
	}
	var out []string
	c.heldUntil = time.Time{}
	for i, src := range blocks {
		open := t.streaming && i == len(blocks)-1
		if open && i < len(c.blocks) && c.blocks[i].src != src && m.md.stale(c.blocks[i]) {
			b := c.blocks[i]
			c.heldUntil = b.at.Add(min(debounceFactor*b.cost, maxDebounce))
		} else if i >= len(c.blocks) || c.blocks[i].src != src {
			var start time.Time
			if m.md.clock != nil {
				start = m.md.clock()
			}
			rows, ok := m.md.block(src, tableWidth(src, width))
			if !ok {
				return nil, false
			}
			rb := renderedBlock{src: src, rows: rows}
			if m.md.clock != nil {
				rb.at = m.md.clock()
				rb.cost = rb.at.Sub(start)
			}
			if i < len(c.blocks) {
				c.blocks[i] = rb
			} else {
				c.blocks = append(c.blocks, rb)
			}
		}
		if i > 0 {
			out = append(out, "")
		}
		out = append(out, c.blocks[i].rows...)
	}
	c.blocks = c.blocks[:len(blocks)]
	return out, true
}

// markdownRedrawMsg comes when the streaming reply's open block may be
// drawn again.
type markdownRedrawMsg struct{ gen int }

// scheduleRedraw draws the streaming reply now, in Update, and when its
// open block is being held back asks for a redraw once the hold is over:
// otherwise the last tokens before a pause in the stream would wait for
// the next event to show. One redraw is pending at a time. (View finds
// the turn already rendered and reuses it.)
func (m *Model) scheduleRedraw() tea.Cmd {
	g := m.gen
	if g == nil || g.reply == nil || m.md == nil || m.md.clock == nil || m.redrawPending || !m.markdownMode() {
		return nil
	}
	l := m.layout()
	if l.tiny {
		return nil
	}
	m.renderTurn(g.reply, l.mainW)
	until := g.reply.md.heldUntil
	if until.IsZero() {
		return nil
	}
	m.redrawPending = true
	id := g.id
	return tea.Tick(max(until.Sub(m.md.clock()), time.Millisecond), func(time.Time) tea.Msg { return markdownRedrawMsg{gen: id} })
}

// handleRedraw draws the held-back reply again (and schedules the next
// redraw if it is still held).
func (m *Model) handleRedraw(msg markdownRedrawMsg) tea.Cmd {
	m.redrawPending = false
	if g := m.gen; g != nil && g.id == msg.gen && g.reply != nil {
		g.reply.cache.valid = false
	}
	return m.scheduleRedraw()
}
