package vulkan

import (
	"time"

	vk "github.com/vulkan-go/vulkan"
)

// A blocking vkWaitForFences puts the host thread to sleep and the kernel
// wakes it some time after the fence signals, late enough that a small
// model's short decode step on a big GPU feels it (issue 23, "fewer fixed
// costs"; runtime/vk/cost.md, "Fixed costs per decode step", has the
// estimate). Spinning on vkGetFenceStatus the
// whole step would burn a core for nothing, so the waiter sleeps until
// shortly before the step is expected to end, then polls.
//
// The expectation is per kind of submission, keyed by its dispatch count
// (every decode step of a model records the same graph, so the same count),
// from the last few such submissions. Only Device.SpinWait turns it on:
// on a CPU device (lavapipe) the polling thread would take a core from the
// driver's own workers.

const (
	// spinLead is how long before the expected end the waiter starts to
	// poll: a scheduler wake-up's worth, with room for a step's jitter.
	spinLead = 250 * time.Microsecond
	// spinTail bounds the polling past the expected end (as a share of
	// the expectation, at least spinLead): a step that runs long falls
	// back to the blocking wait.
	spinTail = 8 // expectation/8
	// spinKinds bounds the expectations kept; past it they start over.
	spinKinds = 64
)

// fenceWaiter waits for one fence; its hooks are the driver's calls, or a
// test's.
type fenceWaiter struct {
	block func(time.Duration) vk.Result // vkWaitForFences with a timeout
	poll  func() vk.Result              // vkGetFenceStatus: Success or NotReady
	now   func() time.Time

	spin     bool
	expected map[int]time.Duration // by dispatch count
}

// wait waits for the fence of a submission made at start with key
// dispatches (0: no expectation kept, a plain blocking wait), up to total.
// It reports how it ended: the driver's result, and whether the end was
// seen by polling.
func (w *fenceWaiter) wait(start time.Time, key int, total time.Duration) (vk.Result, bool) {
	exp, known := w.expected[key]
	polled := false
	r := vk.Timeout
	left := total
	if w.spin && key > 0 && known && exp > spinLead {
		if nap := exp - spinLead - w.now().Sub(start); nap > 0 {
			r = w.block(nap)
		}
		if r == vk.Timeout {
			tail := max(exp/spinTail, spinLead)
			for w.now().Sub(start) < exp+tail {
				if r = w.poll(); r != vk.NotReady {
					polled = r == vk.Success
					break
				}
			}
			if r == vk.NotReady {
				r = vk.Timeout
			}
		}
		left = max(total-w.now().Sub(start), 0)
	}
	if r == vk.Timeout {
		r = w.block(left)
	}
	if r == vk.Success && key > 0 && w.spin {
		w.learn(key, w.now().Sub(start))
	}
	return r, polled
}

// learn folds one submission's duration into its kind's expectation. It
// falls fast and rises slowly: a step that ends before the polling starts
// costs a wake-up, one that ends later only some polling, and a kind's
// first submission often includes compiling its pipelines (tens of ms
// against a step's one or two).
func (w *fenceWaiter) learn(key int, took time.Duration) {
	if w.expected == nil || len(w.expected) >= spinKinds {
		w.expected = map[int]time.Duration{}
	}
	if old, ok := w.expected[key]; ok {
		if took < old {
			took = (old + 7*took) / 8
		} else {
			took = (7*old + took) / 8
		}
	}
	w.expected[key] = took
}
