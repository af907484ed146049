package engine

import (
	"testing"

	"vkchat/runtime/vk"
)

// testBackends lists the backends the end-to-end tests run on: the
// reference always, Vulkan wherever a device exists (lavapipe in CI).
func testBackends(t *testing.T) []string {
	names := []string{"cpu"}
	if devs, err := vk.Devices(); err != nil || len(devs) == 0 {
		t.Logf("vulkan backend not tested: no Vulkan device (%v)", err)
		return names
	}
	return append(names, "vulkan")
}
