package ui

import (
	"context"
	"fmt"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/internal/stream"
	"vkchat/ui/panels"
)

// generation is one running Generate call.
type generation struct {
	id     int
	cancel context.CancelFunc
	ch     *stream.Queue
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
	g := &generation{id: m.genSeq, cancel: cancel, ch: stream.NewQueue(stream.Buffer), started: m.now()}
	req := m.nextRequest()
	g.reply = &conversation.Turn{Role: "assistant", Streaming: true}
	m.applyPendingFork(&req, g.reply)
	m.conv.AddReply(g.reply)
	m.gen = g
	m.run = panels.Run{}
	m.tr.Follow()

	eng, closed, ch := m.eng, m.closed, g.ch
	send := func(it stream.Item) { ch.Send(it, closed) }
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
			send(stream.Item{End: true, Err: err})
		}()
		err = eng.Generate(ctx, req, func(ev engine.Event) { send(stream.Item{Ev: ev}) })
	}(m.wg)
	return tea.Batch(ch.Wait(g.id, closed), stream.Tick(g.id))
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
func (m *Model) handleStream(msg stream.Msg) tea.Cmd {
	g := m.gen
	if g == nil || msg.Gen != g.id {
		return nil
	}
	g.ch.Delivered()
	for _, it := range msg.Items {
		if it.End {
			return m.finishGeneration(g, it.Err)
		}
		if !g.detached {
			m.applyEvent(g, it.Ev)
		}
	}
	return g.ch.Wait(g.id, m.closed)
}
