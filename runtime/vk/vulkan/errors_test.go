package vulkan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	vk "github.com/vulkan-go/vulkan"
)

func TestDeviceLostWrapsBackendError(t *testing.T) {
	err := fmt.Errorf("step: %w", check("vkQueueSubmit", vk.ErrorDeviceLost, "%d dispatches", 74))
	if !errors.Is(err, ErrDeviceLost) {
		t.Fatalf("%v does not wrap ErrDeviceLost", err)
	}
	if !strings.Contains(err.Error(), "vkQueueSubmit: VK_ERROR_DEVICE_LOST (74 dispatches)") {
		t.Errorf("message %q", err)
	}
	if errors.Is(check("vkAllocateMemory", vk.ErrorOutOfDeviceMemory, ""), ErrDeviceLost) {
		t.Error("out of memory reported as device lost")
	}
}

// TestOutOfMemoryNamesTensor: an allocation beyond the heap fails with the
// tensor's name and the bytes needed and available.
func TestOutOfMemoryNamesTensor(t *testing.T) {
	d := testDevice(t)
	var heap uint64
	for _, h := range d.Info.Heaps {
		heap = max(heap, h.Size)
	}
	size := heap + 1<<30
	_, err := d.NewBuffer("blk.7.ffn_up.weight", size, MemDevice)
	if err == nil {
		t.Fatalf("allocating %d bytes on a %d-byte heap succeeded", size, heap)
	}
	msg := err.Error()
	for _, want := range []string{"VK_ERROR_OUT_OF_DEVICE_MEMORY", "blk.7.ffn_up.weight", fmt.Sprint(size), fmt.Sprint(heap)} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}

func TestCloseTwice(t *testing.T) {
	d, err := Open(-1)
	if errors.Is(err, ErrNoVulkan) {
		t.Skipf("no Vulkan device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.NewBuffer("b", 1024, MemDevice); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
