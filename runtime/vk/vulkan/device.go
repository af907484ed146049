package vulkan

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"time"

	vk "github.com/vulkan-go/vulkan"
)

// Device is an opened logical device with one compute queue. It owns the
// memory blocks, the pipeline cache and the command pool; Close releases
// everything, once.
type Device struct {
	Info DeviceInfo

	inst   vk.Instance
	phys   vk.PhysicalDevice
	dev    vk.Device
	queue  vk.Queue
	family uint32
	mem    memoryInfo
	calls  *C.vkc_dev

	pool   vk.CommandPool
	fence  vk.Fence
	oneOff vk.CommandBuffer // uploads and other short submissions

	arena   arena
	staging *Buffer // lazily created when device memory is not host-visible
	cache   *pipelineCache
	modules map[string]module
	kernels []*Kernel
	pools   []vk.DescriptorPool
	poolCap uint32
	pooled  uint32 // sets allocated from pools[len-1]
	closers []func()
	closed  bool

	// trace, when set, collects the buffers created (TrackBuffers).
	trace *[]*Buffer

	// Unmapped leaves device-local memory unmapped even where it is host
	// visible, so uploads and readbacks take the staging path of a
	// discrete GPU without resizable BAR. Set it on a fresh device, before
	// any buffer: lavapipe maps everything, so tests set it to run that
	// path.
	Unmapped bool

	// hung is set when a submission outlived the fence timeout: the work
	// may still be running and reading its buffers, so nothing is
	// submitted or destroyed after it (see submitWait and Close).
	hung error
	// fenceTimeout bounds each submission (0: defaultFenceTimeout);
	// fenceWait replaces vkWaitForFences in tests that play a hung device.
	fenceTimeout time.Duration
	fenceWait    func(time.Duration) vk.Result
	waiter       fenceWaiter

	// SpinWait polls a step's fence from shortly before its expected end
	// instead of sleeping through it (fencewait.go): for GPUs, where the
	// wake-up is a noticeable share of a short step; never for a CPU
	// device, whose driver needs every core.
	SpinWait bool
	// SpinEnds counts the submissions whose end was seen by polling.
	SpinEnds int
}

// Open creates a logical device on the physical device index, or with -1
// on the one Choose picks among those Devices lists.
func Open(index int) (d *Device, err error) {
	inst, err := newInstance()
	if err != nil {
		return nil, err
	}
	d = &Device{inst: inst, modules: map[string]module{}}
	defer func() {
		if err != nil {
			d.Close()
			d = nil
		}
	}()
	pds, err := physicalDevices(inst)
	if err != nil {
		return nil, err
	}
	if len(pds) == 0 {
		return nil, fmt.Errorf("%w: the loader reports no physical devices", ErrNoVulkan)
	}
	infos := make([]DeviceInfo, len(pds))
	for i, pd := range pds {
		infos[i] = describe(inst, pd, i)
	}
	pick, err := Choose(infos, index)
	if err != nil {
		return nil, err
	}
	d.Info, d.phys = infos[pick], pds[pick]
	d.family, _, _ = computeFamily(inst, d.phys)
	d.mem = queryMemory(inst, d.phys)
	// The kernels need nothing beyond Vulkan 1.2 core (f16 data is packed
	// in 32-bit words); the optional features are enabled where present.
	if d.dev, err = createDevice(inst, d.phys, d.family, d.Info.Features); err != nil {
		return nil, fmt.Errorf("device %d (%s): %w", pick, d.Info.Name, err)
	}
	// Out-parameters are locals: cgo rejects pointers into structs that hold
	// Go pointers.
	var queue vk.Queue
	vk.GetDeviceQueue(d.dev, d.family, 0, &queue)
	d.queue = queue
	if d.calls, err = openDeviceCalls(inst, d.dev); err != nil {
		return nil, err
	}

	pci := &vk.CommandPoolCreateInfo{
		SType:            vk.StructureTypeCommandPoolCreateInfo,
		Flags:            vk.CommandPoolCreateFlags(vk.CommandPoolCreateResetCommandBufferBit),
		QueueFamilyIndex: d.family,
	}
	var pool vk.CommandPool
	r := vk.CreateCommandPool(d.dev, pci, nil, &pool)
	pci.Free()
	d.pool = pool
	if err := check("vkCreateCommandPool", r, "queue family %d", d.family); err != nil {
		return nil, err
	}
	fci := &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo}
	var fence vk.Fence
	r = vk.CreateFence(d.dev, fci, nil, &fence)
	fci.Free()
	d.fence = fence
	if err := check("vkCreateFence", r, ""); err != nil {
		return nil, err
	}
	if d.oneOff, err = d.newCommandBuffer(); err != nil {
		return nil, err
	}
	d.arena.d = d
	d.cache = openPipelineCache(d)
	return d, nil
}

// Close waits for the device to go idle and destroys everything it made.
func (d *Device) Close() error {
	if d == nil || d.closed {
		return nil
	}
	if d.hung != nil {
		if d.waitFence(time.Now(), 0) != vk.Success {
			// Destroying buffers, pipelines or the device under work
			// still running is undefined behaviour (and vkDeviceWaitIdle
			// could block for good): leave them, and say so. A later
			// Close tries again.
			return fmt.Errorf("closing %s: a submission is still running, so its objects are left alive: %w", d.Info.Name, d.hung)
		}
		d.hung = nil // it finished late: everything can go
	}
	d.closed = true
	var errs []error
	if d.dev != nil {
		if r := vk.DeviceWaitIdle(d.dev); r != vk.Success {
			errs = append(errs, check("vkDeviceWaitIdle", r, "closing"))
		}
		for i := len(d.closers) - 1; i >= 0; i-- {
			d.closers[i]()
		}
		for _, k := range d.kernels {
			k.destroy(d)
		}
		for _, m := range d.modules {
			vk.DestroyShaderModule(d.dev, m.m, nil)
		}
		for _, p := range d.pools {
			vk.DestroyDescriptorPool(d.dev, p, nil)
		}
		if d.cache != nil {
			if err := d.cache.save(d); err != nil {
				errs = append(errs, err)
			}
			d.cache.destroy(d)
		}
		if d.staging != nil {
			d.staging.Release()
		}
		d.arena.release()
		if d.fence != nil {
			vk.DestroyFence(d.dev, d.fence, nil)
		}
		if d.pool != nil {
			vk.DestroyCommandPool(d.dev, d.pool, nil)
		}
		vk.DestroyDevice(d.dev, nil)
		closeDeviceCalls(d.calls)
		d.calls = nil
	}
	if d.inst != nil {
		destroyInstance(d.inst)
	}
	if err := validationError("using " + d.Info.Name); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Idle waits until the device has finished all submitted work; on a hung
// device it reports the hang instead of waiting without bound.
func (d *Device) Idle() error {
	if d.hung != nil {
		return d.hung
	}
	return check("vkDeviceWaitIdle", vk.DeviceWaitIdle(d.dev), "")
}

// onClose registers cleanup to run (in reverse order) before the device is
// destroyed.
func (d *Device) onClose(f func()) { d.closers = append(d.closers, f) }

// TrackBuffers makes the device append every buffer it creates from now on
// to *dst (nil: stop), so that a user sharing the device (a model loaded on
// a device that outlives it) can release its own buffers; the device's own
// (the staging buffer) are not listed.
func (d *Device) TrackBuffers(dst *[]*Buffer) { d.trace = dst }

// HeapsUsed is how many bytes this device has allocated from each memory
// heap (indexed as Info.Heaps).
func (d *Device) HeapsUsed() []uint64 {
	out := make([]uint64, len(d.mem.heapSize))
	copy(out, d.arena.heapUsed)
	return out
}

// Staged says whether the device has made its staging buffer: some upload
// or readback went through it rather than through mapped memory.
func (d *Device) Staged() bool { return d.staging != nil }
