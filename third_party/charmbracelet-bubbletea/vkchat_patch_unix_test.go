//go:build !windows
// +build !windows

package tea

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

type quitNowMsg struct{}

// quitModel quits when it gets quitNowMsg.
type quitModel struct{}

func (quitModel) Init() Cmd { return nil }

func (m quitModel) Update(msg Msg) (Model, Cmd) {
	if _, ok := msg.(quitNowMsg); ok {
		return m, Quit
	}
	return m, nil
}

func (quitModel) View() string { return "" }

// vkchat patch (fix 1): a signal taken by the signal goroutine while the
// event loop is returning must not hang Run. The filter holds the event
// loop at the QuitMsg that ends it and, meanwhile, the process sends itself
// SIGTERM: the signal goroutine takes it and tries to pass a QuitMsg to an
// event loop that will never read again. Unpatched, shutdown waited for
// that goroutine forever (the send had no way out); patched, the
// program's context ends the send and Run returns.
func TestSignalDuringShutdownDoesNotHang(t *testing.T) {
	// The test's own subscription keeps SIGTERM from ending the test
	// binary when no program is listening.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGTERM)
	defer signal.Stop(guard)

	const tries = 5
	for i := 0; i < tries; i++ {
		armed := make(chan struct{})
		var out bytes.Buffer
		p := NewProgram(quitModel{}, WithInput(nil), WithOutput(&out), WithoutRenderer(),
			WithFilter(func(_ Model, msg Msg) Msg {
				if _, ok := msg.(QuitMsg); ok {
					select {
					case <-armed:
					default:
						close(armed)
						if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
							t.Errorf("kill: %v", err)
						}
						// Both subscriptions get the signal: once the
						// guard has it, the program's channel holds it
						// too. Its goroutine then takes it (the
						// program's context is live, so nothing else is
						// ready in its select) and waits on the send.
						<-guard
						time.Sleep(50 * time.Millisecond)
					}
				}
				return msg
			}))
		done := make(chan error, 1)
		go func() {
			_, err := p.Run()
			done <- err
		}()
		p.Send(quitNowMsg{})
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("try %d: Run: %v", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("try %d: Run did not return: shutdown waits for the signal goroutine, blocked sending to an event loop that has ended", i)
		}
	}
}

// keyModel reports its first key.
type keyModel struct {
	once *sync.Once
	key  chan struct{}
}

func (keyModel) Init() Cmd { return nil }

func (m keyModel) Update(msg Msg) (Model, Cmd) {
	if _, ok := msg.(KeyMsg); ok {
		m.once.Do(func() { close(m.key) })
	}
	return m, nil
}

func (keyModel) View() string { return "" }

// vkchat patch (fix 2): a program killed (its context canceled) while its
// read loop is blocked reading the input must not return from Run before
// that loop has ended, since shutdown closes the reader it reads from.
// Unpatched, shutdown skipped the wait when killed, and Run returned with
// the loop still inside the reader in nearly every try (and now and then
// left it blocked for good on the closed epoll instance).
func TestKilledProgramWaitsForItsReadLoop(t *testing.T) {
	const tries = 20
	for i := 0; i < tries; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		m := keyModel{once: new(sync.Once), key: make(chan struct{})}
		p := NewProgram(m, WithContext(ctx), WithInput(r), WithOutput(io.Discard), WithoutRenderer(), WithoutSignalHandler())
		done := make(chan error, 1)
		go func() {
			_, err := p.Run()
			done <- err
		}()
		// A key through the input: the read loop runs, and is back in
		// Read once the model has it.
		if _, err := w.Write([]byte("a")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-m.key:
		case <-time.After(5 * time.Second):
			t.Fatalf("try %d: the key never arrived", i)
		}
		time.Sleep(5 * time.Millisecond)
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("try %d: Run did not return after the context was canceled", i)
		}
		select {
		case <-p.readLoopDone:
		default:
			t.Fatalf("try %d: Run returned while its read loop was still reading the input it had closed", i)
		}
		r.Close()
		w.Close()
	}
}
