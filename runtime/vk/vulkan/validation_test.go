package vulkan

import (
	"os"
	"strings"
	"testing"

	vk "github.com/vulkan-go/vulkan"
)

// TestValidationRecords proves the validation run can fail: with
// VKCHAT_VALIDATION=1 (scripts/vk-validate.sh) it makes the layer report a
// deliberate misuse, and a write-after-write hazard when synchronization
// validation is on, and checks that the messenger recorded them. It takes
// the messages it caused so that they do not fail the device's Close.
func TestValidationRecords(t *testing.T) {
	if !validationEnabled() {
		t.Skipf("%s=1 is not set", ValidationEnv)
	}
	d := testDevice(t)
	if n, msgs := takeValidation(); n > 0 {
		// earlier tests' messages must still fail the run, not be eaten here
		t.Errorf("%d validation messages before this test: %q", n, msgs)
	}
	expectValidation(true)
	defer expectValidation(false)
	buf, err := d.NewBuffer("validation probe", 256, MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Release()
	err = d.oneShot(func(cb vk.CommandBuffer) {
		// an offset that is not a multiple of 4: VUID-vkCmdFillBuffer-dstOffset-00025
		vk.CmdFillBuffer(cb, buf.buf, 2, 16, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	n, msgs := takeValidation()
	if n == 0 || !strings.Contains(strings.Join(msgs, "\n"), "vkCmdFillBuffer") {
		t.Errorf("a misaligned vkCmdFillBuffer was not reported: %d messages %q", n, msgs)
	}
	if !strings.Contains(os.Getenv("VK_LAYER_ENABLES"), "SYNCHRONIZATION_VALIDATION") {
		t.Log("synchronization validation is off (VK_LAYER_ENABLES): hazard check skipped")
		return
	}
	err = d.oneShot(func(cb vk.CommandBuffer) {
		// two writes of one range with no barrier between them
		vk.CmdFillBuffer(cb, buf.buf, 0, 64, 1)
		vk.CmdFillBuffer(cb, buf.buf, 0, 64, 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	n, msgs = takeValidation()
	if n == 0 || !strings.Contains(strings.Join(msgs, "\n"), "SYNC-HAZARD") {
		t.Errorf("a write-after-write hazard was not reported: %d messages %q", n, msgs)
	}
}
