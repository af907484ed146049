package vulkan

import (
	"errors"
	"strings"
	"testing"
	"time"

	vk "github.com/vulkan-go/vulkan"
)

// TestFenceTimeoutIsNotDeviceLoss plays a device whose submission outlives
// the fence timeout (lavapipe cannot hang on demand, so the fence wait is
// replaced): the error is ErrTimeout and not device loss, the device takes
// no more work, buffers and the device are not destroyed while the work
// may run, and once the work has finished Close releases everything.
func TestFenceTimeoutIsNotDeviceLoss(t *testing.T) {
	testDevice(t) // skips without Vulkan
	d, err := Open(-1)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := d.NewBuffer("in flight", 1024, MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	running := true
	waits := 0
	d.fenceTimeout = 50 * time.Millisecond
	d.fenceWait = func(timeout time.Duration) vk.Result {
		waits++
		if timeout != 50*time.Millisecond {
			t.Errorf("fence wait of %v, want the device's 50ms", timeout)
		}
		if running {
			return vk.Timeout
		}
		return vk.Success
	}
	fill := func() error { return d.oneShot(func(cb vk.CommandBuffer) { fillZero(cb, buf) }) }
	err = fill()
	switch {
	case err == nil:
		t.Fatal("a submission past the fence timeout succeeded")
	case !errors.Is(err, ErrTimeout):
		t.Errorf("%v is not ErrTimeout", err)
	case errors.Is(err, ErrDeviceLost):
		t.Errorf("%v is reported as device loss", err)
	case !strings.Contains(err.Error(), "VK_TIMEOUT") || !strings.Contains(err.Error(), "50ms"):
		t.Errorf("message %q does not name the timeout", err)
	}
	if err := fill(); !errors.Is(err, ErrTimeout) || waits != 1 {
		t.Errorf("a hung device took more work: %v (fence waits %d)", err, waits)
	}
	if err := d.Idle(); !errors.Is(err, ErrTimeout) {
		t.Errorf("idle on a hung device: %v", err)
	}
	buf.Release()
	if buf.done {
		t.Error("a buffer the hung work may use was destroyed")
	}
	if err := d.Close(); err == nil || !strings.Contains(err.Error(), "left alive") {
		t.Errorf("closing a device with work still running: %v", err)
	}
	if d.closed {
		t.Error("the device counts as closed though nothing was destroyed")
	}
	running = false // the work finishes late
	if err := d.Close(); err != nil {
		t.Errorf("closing once the work finished: %v", err)
	}
	if !buf.done {
		t.Error("Close did not release the buffer after the work finished")
	}
}
