package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"vkchat/runtime/cpu"
)

// printCPUProfile prints where the CPU backend's time goes op by op: a
// prefill of pp tokens at position pos, then steps decode steps,
// each timed on the calling thread (cpu.Backend.TimeOps; an op's time
// includes its waits for the pool's helpers) against the wall time of the
// whole pass, whose rest is the time between the ops. The decode steps
// take positions pos.. as the bench's decode test does.
func printCPUProfile(ctx context.Context, w io.Writer, b *cpu.Backend, tokens func(int) []int32, pos, pp, steps int) error {
	defer b.TimeOps(false)
	pp, steps = max(pp, 2), max(steps, 1)
	b.TimeOps(true)
	start := time.Now()
	if _, err := b.Forward(ctx, tokens(pp), pos, false); err != nil {
		return fmt.Errorf("profile: prefill: %w", err)
	}
	showOps(w, fmt.Sprintf("prefill of %d tokens at position %d", pp, pos), b.OpTimes(), time.Since(start), pp, 1)
	step, _ := decodeStep(b)
	b.TimeOps(true)
	start = time.Now()
	next := int32(1)
	for i := 0; i < steps; i++ {
		var err error
		if next, err = step(ctx, next, pos+i); err != nil {
			return fmt.Errorf("profile: decode: %w", err)
		}
	}
	showOps(w, fmt.Sprintf("decode, %d steps from position %d", steps, pos), b.OpTimes(), time.Since(start), 1, steps)
	return nil
}

// showOps prints a table of op times per pass (passes of tokens each),
// the longest first, with their share of the wall time.
func showOps(w io.Writer, title string, ops []cpu.OpTime, wall time.Duration, tokens, passes int) {
	var sum time.Duration
	for _, o := range ops {
		sum += o.Time
	}
	per := func(d time.Duration) float64 { return ms(d) / float64(passes) }
	fmt.Fprintf(w, "\n%s: %.3f ms wall per pass (%.1f tok/s), %.3f ms in the ops (%.0f%%)\n",
		title, per(wall), float64(tokens*passes)/wall.Seconds(), per(sum), 100*float64(sum)/float64(wall))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  op\tcalls per pass\tms per pass\tshare of wall")
	for _, o := range ops {
		fmt.Fprintf(tw, "  %s\t%d\t%.3f\t%.1f%%\n", o.Op, o.Calls/passes, per(o.Time), 100*float64(o.Time)/float64(wall))
	}
	tw.Flush()
}
