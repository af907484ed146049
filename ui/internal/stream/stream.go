// Package stream carries one generation's events from the engine's
// goroutine to the UI: a bounded queue the engine sends to, a command that
// hands Update every event already waiting as one message (so a burst of
// tokens costs one update and one render), and, once the program has
// ended, the way to take back what was still on its way.
package stream

import (
	"fmt"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
)

const (
	// Buffer lets the engine run ahead of a busy UI for a while
	// before emit blocks it.
	Buffer = 256
	// MaxBatch bounds how many queued events one update applies, so a
	// flood of tokens still yields frames.
	MaxBatch = 512
)

// Item is one event from the engine, or the end of the generation.
type Item struct {
	Ev  engine.Event
	End bool
	Err error // what Generate returned, on the end item
}

// Msg carries every item that was waiting when the UI asked, so a
// burst of tokens costs one update and one render.
type Msg struct {
	Gen   int
	Items []Item
}

// Queue carries one generation's events from the engine to the UI.
type Queue struct {
	C chan Item
	// mu is held by the Wait command from before it takes events off
	// C until it has recorded them in taken: the batch in flight to
	// Update. A program that ends (a signal, a quit mid-reply) drops the
	// message in flight, so the root's drainPending (TryReceive) takes that batch back before what
	// is still queued; otherwise the saved reply missed tokens in its
	// middle.
	mu    sync.Mutex
	taken []Item
}

// NewQueue holds size items before Send blocks.
func NewQueue(size int) *Queue {
	return &Queue{C: make(chan Item, size)}
}

// Delivered records that Update got the batch in flight.
func (q *Queue) Delivered() {
	q.mu.Lock()
	q.taken = nil
	q.mu.Unlock()
}

// Send queues it, unless the program has ended (closed is closed).
func (q *Queue) Send(it Item, closed <-chan struct{}) {
	select {
	case q.C <- it:
	case <-closed:
	}
}

// Wait is the command that blocks for the next engine event, then
// takes whatever else is already queued. Update issues it again after each
// message until the end item arrives (the streaming pattern of Charm's mods).
func (q *Queue) Wait(gen int, closed <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		q.mu.Lock()
		defer q.mu.Unlock()
		// Once the program has ended the queue is TryReceive's: an
		// event taken here now would never reach the conversation.
		select {
		case <-closed:
			return nil
		default:
		}
		var first Item
		select {
		case first = <-q.C:
		case <-closed:
			return nil
		}
		items := []Item{first}
	more:
		for !items[len(items)-1].End && len(items) < MaxBatch {
			select {
			case it := <-q.C:
				items = append(items, it)
			default:
				break more
			}
		}
		q.taken = items
		return Msg{Gen: gen, Items: items}
	}
}

// TryReceive is for after the program ended (closed is closed): it returns
// the batch that was in flight to Update, then what is still queued, in
// the order the engine sent them.
func (q *Queue) TryReceive() (Item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.taken) > 0 {
		it := q.taken[0]
		q.taken = q.taken[1:]
		return it, true
	}
	select {
	case it := <-q.C:
		return it, true
	default:
		return Item{}, false
	}
}

// WaitDone waits up to d for the generation goroutines in wg to return, so
// the caller can close the engine without a Generate still running in it.
func WaitDone(wg *sync.WaitGroup, d time.Duration) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(d):
		return fmt.Errorf("ui: the engine did not stop generating within %s", d)
	}
}

// prefillTick is how often the "reading prompt" timer is redrawn while a
// long prompt is processed: often enough to show it is alive.
const prefillTick = 200 * time.Millisecond

// TickMsg drives the prefill timer. It carries the generation it belongs
// to, so a tick from a finished generation is dropped instead of starting
// a second tick chain that would make the timer run twice as fast.
type TickMsg struct{ Gen int }

// Tick is the next tick of generation gen's timer.
func Tick(gen int) tea.Cmd {
	return tea.Tick(prefillTick, func(time.Time) tea.Msg { return TickMsg{Gen: gen} })
}
