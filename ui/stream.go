package ui

import (
	"context"
	"fmt"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/panels"
)

const (
	// streamBuffer lets the engine run ahead of a busy UI for a while
	// before emit blocks it.
	streamBuffer = 256
	// maxBatch bounds how many queued events one update applies, so a
	// flood of tokens still yields frames.
	maxBatch = 512
)

// streamItem is one event from the engine, or the end of the generation.
type streamItem struct {
	ev  engine.Event
	end bool
	err error // what Generate returned, on the end item
}

// streamMsg carries every item that was waiting when the UI asked, so a
// burst of tokens costs one update and one render.
type streamMsg struct {
	gen   int
	items []streamItem
}

// streamQueue carries one generation's events from the engine to the UI.
type streamQueue struct {
	ch chan streamItem
	// mu is held by the waitStream command from before it takes events off
	// ch until it has recorded them in taken: the batch in flight to
	// Update. A program that ends (a signal, a quit mid-reply) drops the
	// message in flight, so drainPending takes that batch back before what
	// is still queued; otherwise the saved reply missed tokens in its
	// middle.
	mu    sync.Mutex
	taken []streamItem
}

func newStreamQueue(size int) *streamQueue {
	return &streamQueue{ch: make(chan streamItem, size)}
}

// delivered records that Update got the batch in flight.
func (q *streamQueue) delivered() {
	q.mu.Lock()
	q.taken = nil
	q.mu.Unlock()
}

// generation is one running Generate call.
type generation struct {
	id     int
	cancel context.CancelFunc
	ch     *streamQueue
	reply  *conversation.Turn
	// canceled: the user stopped it. detached: the conversation it wrote
	// to is gone (new chat, load); its remaining events are ignored.
	canceled bool
	detached bool
	doneErr  bool // an EventDone already reported an error
	started  time.Time
}

// startGeneration runs Generate for the current conversation in its own
// goroutine and returns the command that waits for its first events.
func (m *Model) startGeneration() tea.Cmd {
	ctx, cancel := context.WithCancel(m.baseCtx)
	m.genSeq++
	g := &generation{id: m.genSeq, cancel: cancel, ch: newStreamQueue(streamBuffer), started: m.now()}
	req := m.nextRequest()
	g.reply = &conversation.Turn{Role: "assistant", Streaming: true}
	m.applyPendingFork(&req, g.reply)
	m.conv.AddReply(g.reply)
	m.gen = g
	m.run = panels.Run{}
	m.tr.Follow()

	eng, closed, ch := m.eng, m.closed, g.ch
	send := func(it streamItem) {
		select {
		case ch.ch <- it:
		case <-closed:
		}
	}
	m.wg.Add(1)
	go func(wg *sync.WaitGroup) {
		defer wg.Done()
		defer cancel()
		var err error
		defer func() {
			// A panicking engine must not take the terminal and the
			// conversation down with it: report it like any engine error.
			if r := recover(); r != nil {
				err = fmt.Errorf("engine panic: %v", r)
			}
			send(streamItem{end: true, err: err})
		}()
		err = eng.Generate(ctx, req, func(ev engine.Event) { send(streamItem{ev: ev}) })
	}(m.wg)
	return tea.Batch(waitStream(g.id, ch, closed), tickFor(g.id))
}

// waitStream is the command that blocks for the next engine event, then
// takes whatever else is already queued. Update issues it again after each
// message until the end item arrives (the streaming pattern of Charm's mods).
func waitStream(gen int, q *streamQueue, closed <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		q.mu.Lock()
		defer q.mu.Unlock()
		// Once the program has ended the queue is drainPending's: an
		// event taken here now would never reach the conversation.
		select {
		case <-closed:
			return nil
		default:
		}
		var first streamItem
		select {
		case first = <-q.ch:
		case <-closed:
			return nil
		}
		items := []streamItem{first}
	more:
		for !items[len(items)-1].end && len(items) < maxBatch {
			select {
			case it := <-q.ch:
				items = append(items, it)
			default:
				break more
			}
		}
		q.taken = items
		return streamMsg{gen: gen, items: items}
	}
}

// tryReceive is for after the program ended (closed is closed): it returns
// the batch that was in flight to Update, then what is still queued, in
// the order the engine sent them.
func tryReceive(q *streamQueue) (streamItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.taken) > 0 {
		it := q.taken[0]
		q.taken = q.taken[1:]
		return it, true
	}
	select {
	case it := <-q.ch:
		return it, true
	default:
		return streamItem{}, false
	}
}

// generating reports whether a reply is being produced for this chat.
func (m *Model) generating() bool { return m.gen != nil && !m.gen.detached }

// stopGeneration cancels the running reply; the engine ends it with
// StopCanceled and the partial text stays.
func (m *Model) stopGeneration() {
	if m.gen == nil || m.gen.canceled {
		return
	}
	m.gen.canceled = true
	m.gen.cancel()
	m.setStatus(statusStopping)
}

// What the status line says while a reply winds down; the reply's end
// clears either (its note then says how it ended).
const (
	statusStopping      = "stopping…"
	statusStoppingCtrlC = "stopping the reply · ctrl+c again quits"
)

// detachGeneration stops the running reply and forgets it: the chat it
// belonged to is being replaced.
func (m *Model) detachGeneration() {
	if m.gen == nil {
		return
	}
	m.gen.cancel()
	m.gen.canceled = true
	m.gen.detached = true
	if r := m.gen.reply; r != nil {
		r.Streaming = false
	}
}

// handleStream applies a batch of engine events.
func (m *Model) handleStream(msg streamMsg) tea.Cmd {
	g := m.gen
	if g == nil || msg.gen != g.id {
		return nil
	}
	g.ch.delivered()
	for _, it := range msg.items {
		if it.end {
			return m.finishGeneration(g, it.err)
		}
		if !g.detached {
			m.applyEvent(g, it.ev)
		}
	}
	return waitStream(g.id, g.ch, m.closed)
}
