package ui

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// ioctl is the raw ioctl(2) call, for the pseudo-terminal below.
func ioctl(fd uintptr, req uint, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(req), uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// openPTY opens a pseudo-terminal of 120×40 cells: the program gets the
// terminal side, the test reads and types on the other.
func openPTY(t *testing.T) (ptm, tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	var unlock int32
	if err := ioctl(ptm.Fd(), syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	var n uint32
	if err := ioctl(ptm.Fd(), syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Closed at the end like any terminal: Run returns only after
	// bubbletea's read loop has left the terminal (third_party bubbletea,
	// fix 2; it did not wait after a panic or a canceled context, and its
	// reader asked the terminal for its descriptor racing Close).
	t.Cleanup(func() { tty.Close() })
	ws := struct{ rows, cols, x, y uint16 }{40, 120, 0, 0}
	if err := ioctl(ptm.Fd(), syscall.TIOCSWINSZ, unsafe.Pointer(&ws)); err != nil {
		t.Fatalf("window size: %v", err)
	}
	return ptm, tty
}

func termios(t *testing.T, f *os.File) syscall.Termios {
	t.Helper()
	var tio syscall.Termios
	if err := ioctl(f.Fd(), syscall.TCGETS, unsafe.Pointer(&tio)); err != nil {
		t.Fatalf("tcgetattr: %v", err)
	}
	return tio
}

// On a real (pseudo-)terminal, a panic inside the program leaves the
// terminal as it found it: line mode and echo back on (the program had
// them off), the alternate screen left and the cursor shown; and Run
// returns its one-line error with the conversation saved.
func TestRunRestoresTerminalAfterPanic(t *testing.T) {
	ptm, tty := openPTY(t)
	before := termios(t, tty)
	const cooked = syscall.ICANON | syscall.ECHO
	if before.Lflag&cooked != cooked {
		t.Fatalf("a new terminal is not in line mode with echo: lflag %#x", before.Lflag)
	}
	var screen lockedBuffer
	go io.Copy(&screen, ptm) // ends when the test closes ptm

	eng := &panickyEngine{fakeEngine: newFakeEngine()}
	dir := t.TempDir()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), eng, Config{StateDir: dir, Input: tty, Output: tty})
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; the terminal shows:\n%q", what, screen.String())
			}
		}
	}
	waitFor("the chat to draw", func() bool { return strings.Contains(screen.String(), "Type a message") })
	if raw := termios(t, tty); raw.Lflag&cooked != 0 {
		t.Fatalf("the program did not take the terminal into raw mode: lflag %#x", raw.Lflag)
	}
	io.WriteString(ptm, "keep this\r")
	waitFor("the first message to be saved", func() bool {
		files, _ := filepath.Glob(filepath.Join(dir, "conversations", "*.json"))
		return len(files) == 1
	})
	eng.armed.Store(true)
	io.WriteString(ptm, "/temp 0.5\r")
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after the panic")
	}
	if err == nil || !strings.Contains(err.Error(), "terminal was restored") {
		t.Fatalf("Run after a panic: %v", err)
	}
	after := termios(t, tty)
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Errorf("terminal modes not restored: lflag %#x iflag %#x oflag %#x, were %#x %#x %#x",
			after.Lflag, after.Iflag, after.Oflag, before.Lflag, before.Iflag, before.Oflag)
	}
	waitFor("the screen to be restored", func() bool {
		out := screen.String()
		tail := out[strings.LastIndex(out, "\x1b[?1049h")+1:]
		return strings.Contains(tail, "\x1b[?1049l") && strings.Contains(tail, "\x1b[?25h")
	})
}
