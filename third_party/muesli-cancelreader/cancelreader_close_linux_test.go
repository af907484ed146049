//go:build linux
// +build linux

package cancelreader

import (
	"errors"
	"os"
	"testing"
	"time"
)

// vkchat patch (fix 1): the input file is closed while a Read is blocked
// on it, then the reader is cancelled, as bubbletea's shutdown after a
// panic does. The unpatched wait() called File.Fd on the input after
// waking, reading the descriptor field that File.Close had written with
// nothing to order the two: -race reports it. The patched reader keeps the
// descriptors it was made with.
func TestCancelAfterInputClosedWhileReading(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	r, err := NewReader(pr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var b [8]byte
		_, err := r.Read(b[:])
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let Read block in epoll_wait
	if err := pr.Close(); err != nil {
		t.Fatal(err)
	}
	if !r.Cancel() {
		t.Fatal("Cancel returned false for a file")
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrCanceled) {
			t.Fatalf("Read after Cancel: %v, want ErrCanceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read still blocked 10 s after Cancel")
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
