package vulkan

import (
	"testing"
	"time"

	vk "github.com/vulkan-go/vulkan"
)

// fakeFence is a submission on a virtual clock: it signals at end (never
// when end is 0); a blocking wait that sees it wakes wake later, a poll
// costs a microsecond.
type fakeFence struct {
	t, end, wake  time.Duration
	blocks, polls int
	naps          []time.Duration
}

func (f *fakeFence) waiter(spin bool, expected map[int]time.Duration) *fenceWaiter {
	base := time.Unix(0, 0)
	return &fenceWaiter{
		spin:     spin,
		expected: expected,
		now:      func() time.Time { return base.Add(f.t) },
		block: func(d time.Duration) vk.Result {
			f.blocks++
			f.naps = append(f.naps, d)
			if f.end > 0 && f.t+d >= f.end {
				f.t = max(f.t, f.end) + f.wake
				return vk.Success
			}
			f.t += d
			return vk.Timeout
		},
		poll: func() vk.Result {
			f.polls++
			f.t += time.Microsecond
			if f.end > 0 && f.t >= f.end {
				return vk.Success
			}
			return vk.NotReady
		},
	}
}

// TestFenceWaiter: with SpinWait and a known kind, the waiter sleeps until
// spinLead before the expected end, then polls, and sees the end within a
// poll instead of a wake-up; a step that ends early or runs long falls to
// the blocking wait; unknown kinds, one-shots and SpinWait off never poll;
// a fence that never signals times out at the device's bound.
func TestFenceWaiter(t *testing.T) {
	const ms = time.Millisecond
	wake := 80 * time.Microsecond
	for _, c := range []struct {
		name     string
		spin     bool
		kind     int
		exp      time.Duration // the kind's expectation (0: unknown)
		end      time.Duration // when the fence signals (0: never)
		want     vk.Result
		polled   bool
		maxLate  time.Duration // seen at most this long after end
		maxPolls int
		learned  bool
	}{
		{"spin off", false, 7, 1 * ms, 1 * ms, vk.Success, false, wake, 0, false},
		{"unknown kind", true, 7, 0, 1 * ms, vk.Success, false, wake, 0, true},
		{"one-shot", true, 0, 1 * ms, 1 * ms, vk.Success, false, wake, 0, false},
		{"on time", true, 7, 1 * ms, 1 * ms, vk.Success, true, time.Microsecond, 300, true},
		{"a little late", true, 7, 1 * ms, 1100 * time.Microsecond, vk.Success, true, time.Microsecond, 400, true},
		{"early", true, 7, 1 * ms, 500 * time.Microsecond, vk.Success, false, wake, 0, true},
		{"much later", true, 7, 1 * ms, 10 * ms, vk.Success, false, wake, 600, true},
		{"too short to spin", true, 7, 100 * time.Microsecond, 100 * time.Microsecond, vk.Success, false, wake, 0, true},
		{"never", true, 7, 1 * ms, 0, vk.Timeout, false, 0, 600, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeFence{end: c.end, wake: wake}
			exp := map[int]time.Duration{}
			if c.exp > 0 {
				exp[c.kind] = c.exp
			}
			w := f.waiter(c.spin, exp)
			r, polled := w.wait(time.Unix(0, 0), c.kind, 50*ms)
			if r != c.want || polled != c.polled {
				t.Fatalf("result %v polled %v, want %v %v", r, polled, c.want, c.polled)
			}
			if f.polls > c.maxPolls {
				t.Errorf("%d polls, want at most %d", f.polls, c.maxPolls)
			}
			if c.want == vk.Success && f.t-c.end > c.maxLate {
				t.Errorf("end seen %v after the fence, want at most %v", f.t-c.end, c.maxLate)
			}
			if c.want == vk.Timeout && f.t != 50*ms {
				t.Errorf("gave up at %v, want the device's 50ms", f.t)
			}
			if c.polled && f.naps[0] != c.exp-spinLead {
				t.Errorf("slept %v first, want %v (spinLead before the expected end)", f.naps[0], c.exp-spinLead)
			}
			_, learned := w.expected[c.kind]
			if c.exp == 0 && learned != c.learned {
				t.Errorf("learned %v, want %v", learned, c.learned)
			}
			if c.exp > 0 && c.learned && w.expected[c.kind] == c.exp && f.t != c.exp {
				t.Errorf("expectation stayed %v after a step of %v", c.exp, f.t)
			}
		})
	}
}

// TestFenceWaiterLearns: the expectation falls within a few steps (after
// a first submission that compiled its pipelines), rises slowly, kinds are
// kept apart, and no more than spinKinds are kept.
func TestFenceWaiterLearns(t *testing.T) {
	const ms = time.Millisecond
	w := &fenceWaiter{spin: true}
	w.learn(5, 30*ms) // compiles
	w.learn(9, 300*time.Microsecond)
	steps := 0
	for ; w.expected[5] > 2*ms+100*time.Microsecond; steps++ {
		w.learn(5, 2*ms)
	}
	if steps > 3 {
		t.Errorf("%d steps of 2ms to fall from 30ms to within 0.1ms", steps)
	}
	if w.expected[9] != 300*time.Microsecond {
		t.Errorf("kind 9 expects %v, want 300µs", w.expected[9])
	}
	w.learn(5, 4*ms) // one slow step
	if e := w.expected[5]; e <= 2*ms || e > 2500*time.Microsecond {
		t.Errorf("after one step of 4ms kind 5 expects %v, want a little over 2ms", e)
	}
	for i := 0; i < 3*spinKinds; i++ {
		w.learn(100+i, ms)
		if len(w.expected) > spinKinds {
			t.Fatalf("%d kinds kept, bound %d", len(w.expected), spinKinds)
		}
	}
}

// TestFencePollOnDriver: the driver's vkGetFenceStatus answers the idle,
// reset fence with NotReady (not an error), and a submission waited for by
// polling from its start completes.
func TestFencePollOnDriver(t *testing.T) {
	d := testDevice(t)
	if r := vk.GetFenceStatus(d.dev, d.fence); r != vk.NotReady {
		t.Fatalf("vkGetFenceStatus on the idle fence: %v, want NotReady", r)
	}
	buf, err := d.NewBuffer("polled", 4096, MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Release()
	r, err := d.NewRecorder(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Begin(); err != nil {
		t.Fatal(err)
	}
	r.Fill(Arg{B: buf}, 7)
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
	old := d.SpinWait
	d.SpinWait = true
	defer func() { d.SpinWait = old }()
	const kind = 1 << 20 // a kind no step has
	d.waiter.learn(kind, spinLead+time.Microsecond)
	if err := d.submitWait("polled fill", kind, r.cb); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.waiter.expected[kind]; !ok {
		t.Error("the polled submission's kind has no expectation")
	}
}
