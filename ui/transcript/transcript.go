package transcript

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"vkchat/ui/conversation"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Transcript draws a conversation: every turn's rows (kept per turn
// until something they show changes), replies as Markdown, reasoning
// blocks folded or shown, and a scrolled window onto the rows that
// follows a streaming reply until the user scrolls up. It is used by
// pointer: its caches and the viewport are its own.
type Transcript struct {
	styles theme.Styles
	conv   *conversation.Conversation
	opts   Options
	md     *markdownRenderer

	// What the owner of the conversation hands over before each use
	// (SetModel, SetCursor, SetReply).
	modelName  string
	completion bool
	cursor     Cursor
	reply      *conversation.Turn
	replyID    int

	expanded bool // reasoning blocks shown in full rather than folded

	// renders holds each turn's rendered rows, kept here rather than in
	// the turn so the conversation stays free of drawing; renderRev is
	// the conv.Rev() they were drawn at.
	renders   map[*conversation.Turn]*turnCache
	renderRev int
	// redrawPending: a RedrawMsg is on its way (markdown_stream.go).
	redrawPending bool

	width, height int
	// The first row in view is row anchorRow of unit anchorUnit (see
	// window.go); atBottom: the last draw showed the last row.
	anchorUnit, anchorRow int
	atBottom              bool
	// compRows, compSel: completion mode's rows during one draw
	// (unitRows), compValid while they are current.
	compRows  []string
	compSel   int
	compValid bool
	// follow keeps the view pinned to the bottom while a reply streams
	// in, until the user scrolls up.
	follow bool
	// reveal: the next draw scrolls the selected token into view.
	reveal bool
}

// Options are the transcript's fixed settings.
type Options struct {
	// SavedIn is where conversations are saved, for the welcome text.
	SavedIn string
	// ThinkingKey names the key that folds and shows reasoning blocks,
	// in a folded block's row.
	ThinkingKey string
}

// Cursor is the token inspector's state as far as drawing goes.
type Cursor struct {
	// Inspecting: the transcript has the focus. Replies are drawn as
	// plain text, each token where the cursor can reach it, and Step of
	// Turn is highlighted.
	Inspecting bool
	Turn       *conversation.Turn
	Step       int
	// Heat colours every generated token by its probability, or by its
	// surprisal with BySurprisal; replies are drawn plainly meanwhile.
	Heat, BySurprisal bool
}

// WheelStep is how many rows a notch of the mouse wheel scrolls.
const WheelStep = 3

// New returns the transcript of conv, drawn in st; r decides Markdown's
// dark or light style and colour profile.
func New(conv *conversation.Conversation, st theme.Styles, r *lipgloss.Renderer, opts Options) Transcript {
	return Transcript{
		styles:  st,
		conv:    conv,
		opts:    opts,
		md:      newMarkdownRenderer(r),
		renders: map[*conversation.Turn]*turnCache{},
		follow:  true,
	}
}

// SetSize sets the rows and cells the transcript fills; 0×0 while the
// screen is too small to show it (nothing is drawn or scrolled then).
func (tr *Transcript) SetSize(width, height int) {
	tr.width, tr.height = max(width, 0), max(height, 0)
}

// SetModel sets the name replies are labelled with and whether the
// conversation is one running text (completion mode) rather than turns.
func (tr *Transcript) SetModel(name string, completion bool) {
	tr.modelName, tr.completion = name, completion
}

// SetCursor hands over the inspector's cursor and heatmap settings.
func (tr *Transcript) SetCursor(c Cursor) { tr.cursor = c }

// SetReply names the reply being generated now (nil when none) and the
// generation's id, which a RedrawMsg carries.
func (tr *Transcript) SetReply(reply *conversation.Turn, id int) {
	tr.reply, tr.replyID = reply, id
}

// SetClock sets the clock that paces a streaming reply's open Markdown
// block (time.Now by default); nil draws it again for every token, so
// what a test sees does not depend on the machine's speed.
func (tr *Transcript) SetClock(clock func() time.Time) { tr.md.clock = clock }

// Update handles the mouse wheel and the redraw of a held-back reply.
func (tr *Transcript) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.MouseMsg:
		if msg.Action != tea.MouseActionPress {
			return nil
		}
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			tr.ScrollBy(-WheelStep)
		case tea.MouseButtonWheelDown:
			tr.ScrollBy(+WheelStep)
		}
	case RedrawMsg:
		return tr.handleRedraw(msg)
	}
	return nil
}

// View is the visible window of the transcript: exactly its height in
// rows, none wider than its width.
func (tr *Transcript) View() string {
	tr.sync()
	return strings.Join(termtext.FitLines(tr.windowRows(), tr.width, tr.height), "\n")
}

// sync places the window for the current size and content, applying
// following and revealing the inspected token.
func (tr *Transcript) sync() {
	tr.compValid = false
	if tr.width < 1 || tr.height < 1 {
		return
	}
	if tr.follow {
		tr.anchorUnit, tr.anchorRow = tr.bottomAnchor()
		tr.atBottom = true
	} else {
		tr.place(tr.anchorUnit, tr.anchorRow)
	}
	if !tr.reveal {
		return
	}
	tr.reveal = false
	u, sel, ok := tr.selectedUnit()
	if !ok {
		return
	}
	// The selection's row relative to the anchor's unit, if below it.
	off := -1
	if u >= tr.anchorUnit {
		off = sel
		for i := tr.anchorUnit; i < u && off < tr.anchorRow+tr.height; i++ {
			off += tr.unitLen(i)
		}
	}
	switch {
	case off < tr.anchorRow:
		tr.place(u, sel)
		tr.follow = false
	case off >= tr.anchorRow+tr.height:
		tr.place(u, sel-tr.height+1)
		tr.follow = false
	}
}

// ScrollBy moves the view n rows (up when negative); reaching the bottom
// follows new text again.
func (tr *Transcript) ScrollBy(n int) {
	if tr.width < 1 || tr.height < 1 {
		return
	}
	tr.sync()
	tr.place(tr.anchorUnit, tr.anchorRow+n)
	tr.follow = tr.atBottom
}

// Follow pins the view to the bottom again, as for a new reply.
func (tr *Transcript) Follow() { tr.follow = true }

// Following reports whether the view is pinned to the bottom (false
// once the user has scrolled up).
func (tr *Transcript) Following() bool { return tr.follow }

// RevealSelection scrolls the next draw so the cursor's token is in view.
func (tr *Transcript) RevealSelection() { tr.reveal = true }

// YOffset is the first row in view, as of the last draw. It lays out
// every turn above the view to count their rows: for tests, not for
// drawing.
func (tr *Transcript) YOffset() int { return tr.rowsBefore(tr.anchorUnit) + tr.anchorRow }

// AtBottom reports whether the last draw showed the last row.
func (tr *Transcript) AtBottom() bool { return tr.atBottom }

// TotalLineCount is how many rows the transcript has; like YOffset it
// lays out every turn, for tests.
func (tr *Transcript) TotalLineCount() int { return tr.rowsBefore(tr.unitCount()) }

// ToggleThinking folds or shows every reasoning block and reports
// whether they are shown now.
func (tr *Transcript) ToggleThinking() bool {
	tr.expanded = !tr.expanded
	tr.Invalidate()
	return tr.expanded
}

// Invalidate drops every turn's rows (after something all turns show
// changed, such as the system prompt or the heatmap's basis).
func (tr *Transcript) Invalidate() {
	for _, c := range tr.renders {
		c.render.valid = false
	}
}

// Forget drops what is kept for a turn that left the conversation.
func (tr *Transcript) Forget(turn *conversation.Turn) { delete(tr.renders, turn) }

// Reset forgets every turn and goes back to the top, following: the
// conversation was emptied.
func (tr *Transcript) Reset() {
	clear(tr.renders)
	tr.anchorUnit, tr.anchorRow, tr.atBottom = 0, 0, false
	tr.follow = true
}
