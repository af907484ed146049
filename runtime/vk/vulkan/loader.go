package vulkan

/*
#cgo linux LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

var (
	loadOnce sync.Once
	loadErr  error
)

// ErrNoVulkan means the Vulkan loader or any usable device is missing; tests
// skip on it and the engine falls back to the CPU backend.
var ErrNoVulkan = errors.New("vulkan is not available")

// LibraryEnv names the Vulkan loader to open instead of the platform's
// usual names (libvulkan.so.1; libvulkan.1.dylib or MoltenVK on macOS): a
// loader outside the search path, or a path to nothing to run as on a
// machine without Vulkan.
const LibraryEnv = "VKCHAT_VULKAN_LIBRARY"

// load opens the loader once and hands vulkan-go the same
// vkGetInstanceProcAddr the shim uses, so both see one set of dispatch tables.
// The loader is opened at run time, never linked, so a binary built here
// runs with --backend cpu on a machine that has no Vulkan at all.
func load() error {
	loadOnce.Do(func() {
		var buf [512]C.char
		var path *C.char
		if p := os.Getenv(LibraryEnv); p != "" {
			path = C.CString(p)
			defer C.free(unsafe.Pointer(path))
		}
		p := C.vkc_load(path, &buf[0], C.int(len(buf)))
		if p == nil {
			loadErr = fmt.Errorf("%w: no Vulkan loader (%s); scripts/deps.sh installs one", ErrNoVulkan, C.GoString(&buf[0]))
			return
		}
		vk.SetGetInstanceProcAddr(p)
		if err := vk.Init(); err != nil {
			loadErr = fmt.Errorf("%w: %v", ErrNoVulkan, err)
		}
	})
	return loadErr
}

// Features is what the 1.2/1.3 query structs report: the optional
// features, subgroup properties and driver identity of a device.
type Features struct {
	APIVersion            uint32
	SubgroupSize          uint32
	SubgroupStages        uint32
	SubgroupOps           uint32
	MinSubgroupSize       uint32
	MaxSubgroupSize       uint32
	Storage16             bool
	Storage8              bool
	Float16               bool
	Int8                  bool
	Int16                 bool
	Int64                 bool
	BufferDeviceAddress   bool
	IntegerDot            bool
	IntegerDotAccelerated bool
	SubgroupSizeControl   bool
	ComputeFullSubgroups  bool
	// RequiredSubgroupStages: shader stages a pipeline may require a
	// subgroup size for (1.3; 0 without it).
	RequiredSubgroupStages uint32
	MaxWorkgroupSubgroups  uint32 // subgroups one workgroup may hold under a required size
	DriverID               uint32
	MaxAllocationSize      uint64
	// ComputeUnits is the device's SMs or CUs where a vendor extension
	// tells it (VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties);
	// 0 where none does.
	ComputeUnits uint32
	DriverName   string
	DriverInfo   string
}

func handle(p unsafe.Pointer) C.vkc_handle { return C.vkc_handle(p) }

func queryFeatures(inst vk.Instance, pd vk.PhysicalDevice) Features {
	return queryFeaturesAt(inst, pd, requestedAPI())
}

// queryFeaturesAt queries through the structs API version api allows (the
// instance's version; the shim also caps it by the device's).
func queryFeaturesAt(inst vk.Instance, pd vk.PhysicalDevice, api uint32) Features {
	var f C.vkc_features
	C.vkc_query(handle(unsafe.Pointer(inst)), handle(unsafe.Pointer(pd)), C.uint32_t(api), &f)
	return Features{
		APIVersion:             uint32(f.api_version),
		SubgroupSize:           uint32(f.subgroup_size),
		SubgroupStages:         uint32(f.subgroup_stages),
		SubgroupOps:            uint32(f.subgroup_ops),
		MinSubgroupSize:        uint32(f.min_subgroup_size),
		MaxSubgroupSize:        uint32(f.max_subgroup_size),
		Storage16:              f.storage16 != 0,
		Storage8:               f.storage8 != 0,
		Float16:                f.float16 != 0,
		Int8:                   f.int8 != 0,
		Int16:                  f.int16 != 0,
		Int64:                  f.int64 != 0,
		BufferDeviceAddress:    f.buffer_device_address != 0,
		IntegerDot:             f.integer_dot != 0,
		IntegerDotAccelerated:  f.integer_dot_accelerated != 0,
		SubgroupSizeControl:    f.subgroup_size_control != 0,
		ComputeFullSubgroups:   f.compute_full_subgroups != 0,
		RequiredSubgroupStages: uint32(f.required_subgroup_stages),
		MaxWorkgroupSubgroups:  uint32(f.max_workgroup_subgroups),
		DriverID:               uint32(f.driver_id),
		MaxAllocationSize:      uint64(f.max_memory_allocation_size),
		ComputeUnits:           uint32(f.compute_units),
		DriverName:             C.GoString(&f.driver_name[0]),
		DriverInfo:             C.GoString(&f.driver_info[0]),
	}
}

func b32(b bool) C.uint32_t {
	if b {
		return 1
	}
	return 0
}

// createDevice creates the logical device with one compute queue and the
// optional features the kernels use enabled through the 1.2/1.3 structs.
func createDevice(inst vk.Instance, pd vk.PhysicalDevice, family uint32, f Features) (vk.Device, error) {
	en := C.vkc_enable{
		storage16:              b32(f.Storage16),
		storage8:               b32(f.Storage8),
		float16:                b32(f.Float16),
		int8:                   b32(f.Int8),
		int16:                  b32(f.Int16),
		int64:                  b32(f.Int64),
		buffer_device_address:  b32(f.BufferDeviceAddress),
		integer_dot:            b32(f.IntegerDot),
		subgroup_size_control:  b32(f.SubgroupSizeControl),
		compute_full_subgroups: b32(f.ComputeFullSubgroups),
	}
	var dev C.vkc_handle
	r := C.vkc_create_device(handle(unsafe.Pointer(inst)), handle(unsafe.Pointer(pd)), C.uint32_t(family), &en, &dev)
	if err := check("vkCreateDevice", vk.Result(r), "queue family %d", family); err != nil {
		return nil, err
	}
	return vk.Device(unsafe.Pointer(dev)), nil
}

func bufferAddress(inst vk.Instance, dev vk.Device, b vk.Buffer) uint64 {
	return uint64(C.vkc_buffer_address(handle(unsafe.Pointer(inst)), handle(unsafe.Pointer(dev)), handle(unsafe.Pointer(b))))
}

// instanceVersion is the loader's Vulkan version (1.0 when it cannot tell).
func instanceVersion() uint32 { return uint32(C.vkc_instance_version()) }

// cAlloc returns C memory for data that Vulkan structs point at, keeping Go
// pointers out of C-owned structs as cgo requires.
func cAlloc(n int) unsafe.Pointer { return C.calloc(C.size_t(max(n, 1)), 1) }

func cFree(p unsafe.Pointer) { C.free(p) }

// portabilityEnumeration is the instance extension that makes the loader
// list portability drivers (MoltenVK on macOS): since loader 1.3.216 they
// are hidden unless the instance enables it and sets the flag below.
const portabilityEnumeration = "VK_KHR_portability_enumeration"

// instanceCreatePortabilityBit is VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR,
// newer than vulkan-go's header.
const instanceCreatePortabilityBit vk.InstanceCreateFlags = 0x00000001

// portability returns the extension and flag to create the instance with
// when the loader offers portability enumeration, and nothing otherwise
// (asking for an extension the loader lacks fails vkCreateInstance).
func portability() ([]string, vk.InstanceCreateFlags) {
	name := C.CString(portabilityEnumeration)
	defer C.free(unsafe.Pointer(name))
	if C.vkc_instance_has_extension(name) == 0 {
		return nil, 0
	}
	return []string{portabilityEnumeration + "\x00"}, instanceCreatePortabilityBit
}
