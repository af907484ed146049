package transcript

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
func (tr *Transcript) markdownRows(t *conversation.Turn, width int) ([]string, bool) {
	if width < minMarkdownWidth || tr.md == nil {
		return nil, false
	}
	text := strings.ReplaceAll(termtext.Sanitize(t.Content), "\t", strings.Repeat(" ", termtext.TabWidth))
	blocks := markdownBlocks(text)
	c := &tr.cacheOf(t).md
	if c.width != width {
		*c = markdownCache{width: width}
	}
	var out []string
	c.heldUntil = time.Time{}
	for i, src := range blocks {
		open := t.Streaming && i == len(blocks)-1
		if open && i < len(c.blocks) && c.blocks[i].src != src && tr.md.stale(c.blocks[i]) {
			b := c.blocks[i]
			c.heldUntil = b.at.Add(min(debounceFactor*b.cost, maxDebounce))
		} else if i >= len(c.blocks) || c.blocks[i].src != src {
			var start time.Time
			if tr.md.clock != nil {
				start = tr.md.clock()
			}
			rows, ok := tr.md.block(src, tableWidth(src, width))
			if !ok {
				return nil, false
			}
			rb := renderedBlock{src: src, rows: rows}
			if tr.md.clock != nil {
				rb.at = tr.md.clock()
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

// RedrawMsg comes when the streaming reply's open block may be drawn
// again.
type RedrawMsg struct{ gen int }

// ScheduleRedraw draws the streaming reply now (the owner calls it after
// each streamed event, in Update) and, when its open block is being held
// back, asks for a redraw once the hold is over: otherwise the last
// tokens before a pause in the stream would wait for the next event to
// show. One redraw is pending at a time. (View finds the turn already
// rendered and reuses it.)
func (tr *Transcript) ScheduleRedraw() tea.Cmd {
	reply := tr.reply
	if reply == nil || tr.md == nil || tr.md.clock == nil || tr.redrawPending || !tr.markdownMode() {
		return nil
	}
	if tr.width < 1 {
		return nil
	}
	tr.renderTurn(reply, tr.width)
	until := tr.cacheOf(reply).md.heldUntil
	if until.IsZero() {
		return nil
	}
	tr.redrawPending = true
	id := tr.replyID
	return tea.Tick(max(until.Sub(tr.md.clock()), time.Millisecond), func(time.Time) tea.Msg { return RedrawMsg{gen: id} })
}

// handleRedraw draws the held-back reply again (and schedules the next
// redraw if it is still held).
func (tr *Transcript) handleRedraw(msg RedrawMsg) tea.Cmd {
	tr.redrawPending = false
	if tr.reply != nil && tr.replyID == msg.gen {
		tr.cacheOf(tr.reply).render.valid = false
	}
	return tr.ScheduleRedraw()
}
