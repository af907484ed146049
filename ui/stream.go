package ui

import (
	"context"
	"fmt"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
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

// generation is one running Generate call.
type generation struct {
	id     int
	cancel context.CancelFunc
	ch     chan streamItem
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
	g := &generation{id: m.genSeq, cancel: cancel, ch: make(chan streamItem, streamBuffer), started: m.now()}
	req := m.nextRequest()
	g.reply = &conversation.Turn{Role: "assistant", Streaming: true}
	m.applyPendingFork(&req, g.reply)
	m.conv.AddReply(g.reply)
	m.gen = g
	m.run = runStats{}
	m.tr.Follow()

	eng, closed, ch := m.eng, m.closed, g.ch
	send := func(it streamItem) {
		select {
		case ch <- it:
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
func waitStream(gen int, ch <-chan streamItem, closed <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		var first streamItem
		select {
		case first = <-ch:
		case <-closed:
			return nil
		}
		items := []streamItem{first}
		for !items[len(items)-1].end && len(items) < maxBatch {
			it, ok := tryReceive(ch)
			if !ok {
				break
			}
			items = append(items, it)
		}
		return streamMsg{gen: gen, items: items}
	}
}

func tryReceive(ch <-chan streamItem) (streamItem, bool) {
	select {
	case it := <-ch:
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
