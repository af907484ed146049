package engine

import (
	"testing"

	"vkchat/runtime/vk/vulkan"
)

// testBackends lists the backends the end-to-end tests run on: the
// reference always, Vulkan wherever a device exists (lavapipe in CI).
func testBackends(t *testing.T) []string {
	names := []string{"cpu"}
	if raceEnabled {
		// Under the race detector these tests are about the engine's
		// goroutines; Vulkan pipeline compilation would only add minutes.
		t.Log("vulkan backend not tested under -race")
		return names
	}
	if devs, err := vulkan.Devices(); err != nil || len(devs) == 0 {
		t.Logf("vulkan backend not tested: no Vulkan device (%v)", err)
		return names
	}
	return append(names, "vulkan")
}
