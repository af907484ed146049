package vulkan

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// ValidationEnv names the variable that turns on the Khronos validation
// layer with a messenger that records what it reports: VKCHAT_VALIDATION=1.
// Every instance then enables VK_LAYER_KHRONOS_validation and
// VK_EXT_debug_utils (creation fails when the layer is not installed, so a
// missing layer cannot pass for a clean run), each message is printed to
// stderr as "vulkan validation ...", and Device.Close and Devices return an
// error naming the messages recorded while they ran. Synchronization
// validation is the layer's to switch on (VK_LAYER_ENABLES, see
// scripts/vk-validate.sh).
const ValidationEnv = "VKCHAT_VALIDATION"

const validationLayer = "VK_LAYER_KHRONOS_validation"

func validationEnabled() bool { return os.Getenv(ValidationEnv) == "1" }

// requestedAPI is the Vulkan version the instance asks for: 1.3 where the
// loader has it, so the 1.3 query and feature structs may be chained, else
// 1.2, the least the runtime runs on. The shim caps what it chains by this
// and by each device's own version.
func requestedAPI() uint32 {
	v13 := vk.MakeVersion(1, 3, 0)
	if instanceVersion() >= v13 {
		return v13
	}
	return vk.MakeVersion(1, 2, 0)
}

// instanceLayers and instanceExtensions are what newInstance enables.
func instanceLayers() []string {
	if validationEnabled() {
		return []string{validationLayer + "\x00"}
	}
	return nil
}

func instanceExtensions() []string {
	if validationEnabled() {
		return []string{"VK_EXT_debug_utils\x00"}
	}
	return nil
}

// attachValidation installs the recording messenger on a new instance when
// validation is on.
func attachValidation(inst vk.Instance) error {
	if !validationEnabled() {
		return nil
	}
	if r := vk.Result(C.vkc_debug_open(hnd(inst))); r != vk.Success {
		return check("vkCreateDebugUtilsMessengerEXT", r, "%s=1 asks for the validation messenger", ValidationEnv)
	}
	return nil
}

// destroyInstance removes the messenger (if any) and then the instance.
func destroyInstance(inst vk.Instance) {
	if inst == nil {
		return
	}
	C.vkc_debug_close(hnd(inst))
	vk.DestroyInstance(inst, nil)
}

// takeValidation returns how many messages the layer reported since the
// last call and the first few of them, clearing the record.
func takeValidation() (int, []string) {
	const keep, size = 16, 1024
	buf := C.calloc(keep*size, 1)
	defer C.free(buf)
	n := int(C.vkc_debug_take((*C.char)(buf), size, keep))
	var msgs []string
	for i := 0; i < min(n, keep); i++ {
		msgs = append(msgs, C.GoString((*C.char)(unsafe.Add(buf, i*size))))
	}
	return n, msgs
}

// expectValidation marks the messages that follow as provoked on purpose
// (see vkc_debug_expect).
func expectValidation(on bool) {
	v := C.int32_t(0)
	if on {
		v = 1
	}
	C.vkc_debug_expect(v)
}

// validationError is an error listing the messages recorded since the last
// call, or nil when validation is off or reported nothing.
func validationError(what string) error {
	if !validationEnabled() {
		return nil
	}
	n, msgs := takeValidation()
	if n == 0 {
		return nil
	}
	return fmt.Errorf("vulkan validation: %d messages while %s:\n  %s", n, what, strings.Join(msgs, "\n  "))
}
