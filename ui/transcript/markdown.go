package transcript

import (
	"regexp"
	"strings"
	"time"

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

// maxMarkdownBytes is the longest reply drawn as Markdown; a longer one
// (a loaded file's, far beyond what a context window generates) is drawn
// as plain text, which costs a fraction of glamour's time and memory: a
// 60 MB reply took glamour 90 s.
const maxMarkdownBytes = 512 << 10

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
		// A model's single line breaks (a poem, an address, a list
		// written without Markdown) are meant as breaks, as in every chat
		// UI; Markdown would join them into one paragraph.
		glamour.WithPreservedNewLines(),
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
	var rows []string
	for _, r := range strings.Split(out, "\n") {
		r = trimPadding(r)
		if termtext.Width(r) > width {
			// glamour leaves a word longer than the width (a URL, a
			// path) whole; cut it rather than lose its end at the
			// screen's edge.
			rows = append(rows, strings.Split(xansi.Hardwrap(r, width, true), "\n")...)
			continue
		}
		rows = append(rows, r)
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
