package hub

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestFormatProgress(t *testing.T) {
	p := Progress{File: "m.gguf", Done: 50 << 20, Total: 200 << 20, Rate: 10 << 20, ETA: 15 * time.Second}
	if got, want := FormatProgress(p, false), "m.gguf  50.0 MiB / 200.0 MiB   25%  10.0 MiB/s  ETA 0:15"; got != want {
		t.Errorf("plain: %q, want %q", got, want)
	}
	if got := FormatProgress(p, true); !strings.Contains(got, "[█████░░░░░░░░░░░░░░░] 50.0 MiB") {
		t.Errorf("bar: %q", got)
	}
	if got, want := FormatProgress(Progress{File: "u.gguf", Done: 2048}, false), "u.gguf  2.0 KiB"; got != want {
		t.Errorf("unknown total: %q, want %q", got, want)
	}
	if got := formatETA(2*time.Hour + 3*time.Minute + 4*time.Second); got != "2:03:04" {
		t.Errorf("formatETA = %q", got)
	}
}

func TestPrinterTTY(t *testing.T) {
	var b bytes.Buffer
	pr := &Printer{W: &b, TTY: true}
	pr.Update(Progress{File: "m", Done: 1, Total: 2})
	pr.Update(Progress{File: "m", Done: 2, Total: 2})
	pr.Done()
	pr.Done() // idempotent
	out := b.String()
	if strings.Count(out, "\r") != 2 || strings.Count(out, "\x1b[K") != 2 || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("tty output %q", out)
	}
}

func TestPrinterPlainIsPeriodic(t *testing.T) {
	var b bytes.Buffer
	now := time.Unix(0, 0)
	pr := &Printer{W: &b, Interval: 5 * time.Second, now: func() time.Time { return now }}
	for i := int64(0); i <= 100; i++ {
		pr.Update(Progress{File: "m", Done: i, Total: 100})
		now = now.Add(200 * time.Millisecond) // 20 s in all
	}
	pr.Update(Progress{File: "m", Done: 100, Total: 100}) // the final report repeats
	pr.Done()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	// t=0, 5, 10, 15, 20 s; the last one is the 100% line.
	if len(lines) != 5 || !strings.Contains(lines[4], "100%") || strings.Contains(b.String(), "\r") {
		t.Errorf("plain output:\n%s", b.String())
	}
}

func TestReporterThrottlesAndEstimates(t *testing.T) {
	old := progressEvery
	progressEvery = time.Hour
	defer func() { progressEvery = old }()
	var got []Progress
	r := newReporter("f", 10, 100, func(p Progress) { got = append(got, p) })
	for i := int64(11); i < 100; i++ {
		r.update(i)
	}
	time.Sleep(5 * time.Millisecond)
	r.flush(100)
	if len(got) != 2 || got[0].Done != 10 || got[1].Done != 100 || got[1].Rate <= 0 || got[1].ETA != 0 {
		t.Errorf("reports = %+v, want the first and the final one", got)
	}
	r = newReporter("f", 0, 1000, func(p Progress) { got = append(got, p) })
	r.rate = 100
	r.emit(500)
	if p := got[len(got)-1]; p.ETA != 5*time.Second {
		t.Errorf("ETA = %v, want 5s", p.ETA)
	}
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is a terminal")
	}
}
