package ui

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/conversation"
	"vkchat/ui/termtext"
)

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
func (m *Model) markdownRows(t *conversation.Turn, width int) ([]string, bool) {
	if width < minMarkdownWidth || m.md == nil {
		return nil, false
	}
	text := strings.ReplaceAll(termtext.Sanitize(t.Content), "\t", strings.Repeat(" ", termtext.TabWidth))
	blocks := markdownBlocks(text)
	c := &m.cacheOf(t).md
	if c.width != width {
		*c = markdownCache{width: width}
	}
	var out []string
	c.heldUntil = time.Time{}
	for i, src := range blocks {
		open := t.Streaming && i == len(blocks)-1
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
	until := m.cacheOf(g.reply).md.heldUntil
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
		m.cacheOf(g.reply).render.valid = false
	}
	return m.scheduleRedraw()
}
