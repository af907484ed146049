package vk

import (
	"errors"
	"fmt"
	"testing"

	"vkchat/runtime/backend"
	"vkchat/runtime/vk/vulkan"
)

// TestDeviceLostWrapsBackendError: a device loss reported by the Vulkan
// layer leaves the backend as backend.ErrDeviceLost (the engine's cue to
// fall back to the CPU), its message unchanged; a timeout is not one.
func TestDeviceLostWrapsBackendError(t *testing.T) {
	lost := fmt.Errorf("vulkan backend: step at position 3 (1 tokens): %w", &vulkan.Error{Call: "vkQueueSubmit", Result: -4, Detail: "74 dispatches"})
	if !errors.Is(lost, vulkan.ErrDeviceLost) {
		t.Fatalf("%v: VK_ERROR_DEVICE_LOST (-4) is not vulkan.ErrDeviceLost", lost)
	}
	err := deviceError(lost)
	if !errors.Is(err, backend.ErrDeviceLost) || !errors.Is(err, vulkan.ErrDeviceLost) {
		t.Fatalf("%v does not wrap backend.ErrDeviceLost and vulkan.ErrDeviceLost", err)
	}
	if err.Error() != lost.Error() {
		t.Errorf("message %q, want %q", err, lost)
	}
	var ve *vulkan.Error
	if !errors.As(err, &ve) || ve.Call != "vkQueueSubmit" {
		t.Errorf("%v: the vulkan.Error is not reachable", err)
	}
	timeout := fmt.Errorf("step: %w", vulkan.ErrTimeout)
	if errors.Is(deviceError(timeout), backend.ErrDeviceLost) {
		t.Error("a timeout reported as device lost")
	}
	if deviceError(nil) != nil {
		t.Error("nil became an error")
	}
}
