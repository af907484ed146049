package cpu

import (
	"reflect"
	"sort"
	"strings"
	"time"

	"vkchat/runtime/plan"
)

// OpTime is the wall time the calling thread spent in one kind of plan op
// while timing was on (Backend.TimeOps), its waits for the pool's helpers
// included: what a forward pass costs op by op, on the clock it is
// measured by.
type OpTime struct {
	Op    string // "moe", "products → q,k,v", "head: products → logits", …
	Calls int
	Time  time.Duration
}

// opTimer sums the steps' times by label while timing is on.
type opTimer struct{ byOp map[string]*OpTime }

// TimeOps starts timing every step of the compiled plan, from zero, or
// with false stops it. Off, a step pays one nil check.
func (b *Backend) TimeOps(on bool) {
	b.timer = nil
	if on {
		b.timer = &opTimer{byOp: map[string]*OpTime{}}
	}
}

// OpTimes returns the totals since TimeOps(true), the longest first.
func (b *Backend) OpTimes() []OpTime {
	if b.timer == nil {
		return nil
	}
	out := make([]OpTime, 0, len(b.timer.byOp))
	for _, t := range b.timer.byOp {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Time != out[j].Time {
			return out[i].Time > out[j].Time
		}
		return out[i].Op < out[j].Op
	})
	return out
}

// timed wraps the steps compiled from ops (one each) so that they report
// to the timer when one is on, labelled by opLabel after prefix.
func (b *Backend) timed(prefix string, ops []plan.Op, steps []step) {
	for i, s := range steps {
		label := prefix + opLabel(ops[i])
		steps[i] = func(r *pass) {
			t := b.timer
			if t == nil {
				s(r)
				return
			}
			start := time.Now()
			s(r)
			d := time.Since(start)
			o := t.byOp[label]
			if o == nil {
				o = &OpTime{Op: label}
				t.byOp[label] = o
			}
			o.Calls++
			o.Time += d
		}
	}
}

// opLabel names an op by its kind, and a product by what it writes.
func opLabel(op plan.Op) string {
	if o, ok := op.(plan.Products); ok {
		outs := make([]string, len(o.Outs))
		for i, p := range o.Outs {
			outs[i] = p.Out.String()
		}
		return "products → " + strings.Join(outs, ",")
	}
	return strings.ToLower(reflect.TypeOf(op).Name())
}
