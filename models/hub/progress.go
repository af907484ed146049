package hub

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"vkchat/models/store"
)

// reporter turns byte counts into throttled Progress reports.
type reporter struct {
	file     string
	total    int64
	fn       func(Progress)
	start    time.Time
	base     int64 // bytes already on disk when this run began
	last     time.Time
	lastDone int64
	rate     float64
}

func newReporter(file string, offset, total int64, fn func(Progress)) *reporter {
	now := time.Now()
	r := &reporter{file: file, total: total, fn: fn, start: now, base: offset, last: now, lastDone: offset}
	r.emit(offset)
	return r
}

func (r *reporter) update(done int64) {
	if r.fn == nil {
		return
	}
	now := time.Now()
	dt := now.Sub(r.last)
	if dt < progressEvery {
		return
	}
	// Exponential smoothing with a ~3 s time constant: steady enough to
	// read, quick enough to follow a real change of speed.
	inst := float64(done-r.lastDone) / dt.Seconds()
	if r.rate == 0 {
		r.rate = inst
	} else {
		a := 1 - math.Exp(-dt.Seconds()/3)
		r.rate += a * (inst - r.rate)
	}
	r.last, r.lastDone = now, done
	r.emit(done)
}

// flush reports the final state, with the average rate of the whole run.
func (r *reporter) flush(done int64) {
	if r.fn == nil {
		return
	}
	if el := time.Since(r.start).Seconds(); el > 0 && done > r.base {
		r.rate = float64(done-r.base) / el
	}
	r.emit(done)
}

func (r *reporter) emit(done int64) {
	if r.fn == nil {
		return
	}
	p := Progress{File: r.file, Done: done, Total: r.total, Rate: r.rate}
	if r.total > 0 && r.rate > 0 && done < r.total {
		p.ETA = time.Duration(float64(r.total-done) / r.rate * float64(time.Second)).Round(time.Second)
	}
	r.fn(p)
}

// Printer renders Progress reports. On a terminal it redraws one line in
// place; elsewhere (a log, CI) it prints a plain line every Interval so
// the output stays readable.
type Printer struct {
	W        io.Writer
	TTY      bool
	Interval time.Duration // between plain lines; 0 means 5s

	now      func() time.Time // for tests
	last     time.Time
	drawn    bool // a TTY line is on screen
	printed  bool // at least one plain line was printed
	lastDone int64
}

// Update shows p.
func (pr *Printer) Update(p Progress) {
	if pr.TTY {
		fmt.Fprintf(pr.W, "\r%s\x1b[K", FormatProgress(p, true))
		pr.drawn = true
		return
	}
	now := time.Now()
	if pr.now != nil {
		now = pr.now()
	}
	iv := pr.Interval
	if iv <= 0 {
		iv = 5 * time.Second
	}
	complete := p.Total > 0 && p.Done >= p.Total
	if pr.printed && now.Sub(pr.last) < iv && !complete {
		return
	}
	if pr.printed && p.Done == pr.lastDone {
		return // the final report repeats the last update
	}
	fmt.Fprintln(pr.W, FormatProgress(p, false))
	pr.last, pr.printed = now, true
	pr.lastDone = p.Done
}

// Done ends the progress display (moves off the redrawn line).
func (pr *Printer) Done() {
	if pr.drawn {
		fmt.Fprintln(pr.W)
		pr.drawn = false
	}
}

// FormatProgress writes one progress line: name, bytes, percent, rate, ETA;
// with bar, a 20-cell bar too.
func FormatProgress(p Progress, bar bool) string {
	var b strings.Builder
	b.WriteString(p.File)
	b.WriteString("  ")
	if p.Total > 0 {
		frac := math.Min(1, float64(p.Done)/float64(p.Total))
		if bar {
			const cells = 20
			full := int(frac * cells)
			b.WriteString("[" + strings.Repeat("█", full) + strings.Repeat("░", cells-full) + "] ")
		}
		fmt.Fprintf(&b, "%s / %s  %3.0f%%", store.FormatSize(p.Done), store.FormatSize(p.Total), frac*100)
	} else {
		b.WriteString(store.FormatSize(p.Done))
	}
	if p.Rate > 0 {
		fmt.Fprintf(&b, "  %s/s", store.FormatSize(int64(p.Rate)))
	}
	if p.ETA > 0 {
		fmt.Fprintf(&b, "  ETA %s", formatETA(p.ETA))
	}
	return b.String()
}

func formatETA(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// IsTerminal reports whether w is a terminal, so progress can redraw one
// line in place. TERM=dumb (an editor's shell buffer) counts as not one.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
