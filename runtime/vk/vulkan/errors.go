package vulkan

import (
	"errors"
	"fmt"

	vk "github.com/vulkan-go/vulkan"
)

// Error is a failed Vulkan call: which call, its VkResult and what it was
// doing (sizes, tensor names) so that a user can act on it.
type Error struct {
	Call   string
	Result vk.Result
	Detail string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Call, resultName(e.Result))
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// ErrTimeout is a submission that did not finish within the fence timeout.
// It is not device loss: the device may still be running the work (a
// very slow step, or a kernel that never ends), so its objects stay alive
// and the device takes no more work.
var ErrTimeout = errors.New("vulkan: the device did not finish a submission in time")

// ErrDeviceLost is VK_ERROR_DEVICE_LOST: the device (or its driver) gave
// up, and nothing on it can be used again.
var ErrDeviceLost = errors.New("vulkan: the device was lost")

// Unwrap maps VK_ERROR_DEVICE_LOST to ErrDeviceLost (which a user may
// answer by falling back to another device or the CPU), and VK_TIMEOUT to
// ErrTimeout.
func (e *Error) Unwrap() error {
	switch e.Result {
	case vk.ErrorDeviceLost:
		return ErrDeviceLost
	case vk.Timeout:
		return ErrTimeout
	}
	return nil
}

// check turns a VkResult into an error; detail is formatted only on failure.
func check(call string, r vk.Result, format string, args ...any) error {
	if r == vk.Success {
		return nil
	}
	d := format
	if len(args) > 0 {
		d = fmt.Sprintf(format, args...)
	}
	return &Error{Call: call, Result: r, Detail: d}
}

func resultName(r vk.Result) string {
	names := map[vk.Result]string{
		vk.Success:                   "VK_SUCCESS",
		vk.NotReady:                  "VK_NOT_READY",
		vk.Timeout:                   "VK_TIMEOUT",
		vk.Incomplete:                "VK_INCOMPLETE",
		vk.ErrorOutOfHostMemory:      "VK_ERROR_OUT_OF_HOST_MEMORY",
		vk.ErrorOutOfDeviceMemory:    "VK_ERROR_OUT_OF_DEVICE_MEMORY",
		vk.ErrorInitializationFailed: "VK_ERROR_INITIALIZATION_FAILED",
		vk.ErrorDeviceLost:           "VK_ERROR_DEVICE_LOST",
		vk.ErrorMemoryMapFailed:      "VK_ERROR_MEMORY_MAP_FAILED",
		vk.ErrorLayerNotPresent:      "VK_ERROR_LAYER_NOT_PRESENT",
		vk.ErrorExtensionNotPresent:  "VK_ERROR_EXTENSION_NOT_PRESENT",
		vk.ErrorFeatureNotPresent:    "VK_ERROR_FEATURE_NOT_PRESENT",
		vk.ErrorIncompatibleDriver:   "VK_ERROR_INCOMPATIBLE_DRIVER",
		vk.ErrorTooManyObjects:       "VK_ERROR_TOO_MANY_OBJECTS",
		vk.ErrorFormatNotSupported:   "VK_ERROR_FORMAT_NOT_SUPPORTED",
		vk.ErrorFragmentedPool:       "VK_ERROR_FRAGMENTED_POOL",
		vk.ErrorOutOfPoolMemory:      "VK_ERROR_OUT_OF_POOL_MEMORY",
		vk.ErrorFragmentation:        "VK_ERROR_FRAGMENTATION",
	}
	if n, ok := names[r]; ok {
		return n
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}
