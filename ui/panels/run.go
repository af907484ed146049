package panels

import (
	"time"

	"vkchat/runtime/engine"
)

// speedHistory is how many recent per-token speeds the sparkline keeps.
const speedHistory = 120

// latencyHistory bounds the per-token decode times the latency panel
// reads (its percentiles and histogram).
const latencyHistory = 512

// Run is the measurements of the latest generation, folded from its
// events, that the speed and latency panels show.
type Run struct {
	Prefill   *engine.PrefillInfo
	TTFT      time.Duration // 0 until the first token
	last      time.Duration // how long the latest token took
	decodeSum time.Duration // every token after the first
	decodeN   int
	Speeds    []float64
	latencies []time.Duration         // recent decode times, first token excluded
	Progress  *engine.PrefillProgress // the prompt being read, before EventPrefill
	Generated int
	Done      *engine.DoneInfo
	// Spec is the latest speculative mark, with the reply's totals (nil
	// until a draft is verified).
	Spec *engine.SpecMark
}

// Fold takes one engine event into the measurements.
func (r *Run) Fold(ev engine.Event) {
	switch {
	case ev.Kind == engine.EventPrefillProgress && ev.Progress != nil:
		p := *ev.Progress
		r.Progress = &p
	case ev.Kind == engine.EventPrefill && ev.Prefill != nil:
		p := *ev.Prefill
		r.Prefill = &p
	case ev.Kind == engine.EventDone && ev.Done != nil:
		d := *ev.Done
		r.Done = &d
	case ev.Kind == engine.EventToken && ev.Token != nil:
		t := ev.Token
		r.Generated++
		if t.Spec != nil {
			r.Spec = t.Spec
		}
		r.last = t.Duration
		// The first token of this generation: a fork's starts past its
		// kept prefix, so its index is not 0.
		if r.Generated == 1 {
			r.TTFT = t.SinceStart
			return
		}
		r.decodeSum += t.Duration
		r.decodeN++
		if t.Duration > 0 {
			r.Speeds = append(r.Speeds, 1/t.Duration.Seconds())
			r.latencies = append(r.latencies, t.Duration)
			if len(r.latencies) > latencyHistory {
				r.latencies = r.latencies[len(r.latencies)-latencyHistory:]
			}
			if len(r.Speeds) > speedHistory {
				r.Speeds = r.Speeds[len(r.Speeds)-speedHistory:]
			}
		}
	}
}

// avg is the decode speed without the first token, which also pays for
// warm-up; the engine's own total is used once it has reported it.
func (r Run) avg() float64 {
	if d := r.Done; d != nil && d.Decode > 0 && d.Generated > 1 {
		return float64(d.Generated-1) / d.Decode.Seconds()
	}
	if r.decodeSum <= 0 {
		return 0
	}
	return float64(r.decodeN) / r.decodeSum.Seconds()
}

// Metrics is what the speed panel shows of the run: waiting is how long
// the first token has been awaited, load the model's load time.
func (r Run) Metrics(waiting, load time.Duration, contextUsed, contextSize int) Metrics {
	return Metrics{
		Latencies:   r.latencies,
		Progress:    r.Progress,
		Waiting:     waiting,
		Load:        load,
		Prefill:     r.Prefill,
		TTFT:        r.TTFT,
		Last:        r.last,
		Avg:         r.avg(),
		Speeds:      r.Speeds,
		Generated:   r.Generated,
		ContextUsed: contextUsed,
		ContextSize: contextSize,
		Spec:        r.Spec,
	}
}
