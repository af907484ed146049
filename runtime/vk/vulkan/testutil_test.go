package vulkan

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

var (
	sharedOnce sync.Once
	shared     *Device
	sharedErr  error
)

// TestMain closes the device the tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared test device:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testDevice returns the shared default device, skipping only when no
// Vulkan device exists at all.
func testDevice(t testing.TB) *Device {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Open(-1) })
	if errors.Is(sharedErr, ErrNoVulkan) {
		t.Skipf("no Vulkan device: %v", sharedErr)
	}
	if sharedErr != nil {
		t.Fatalf("opening the Vulkan device: %v", sharedErr)
	}
	return shared
}
