package vulkan

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// The struct-array calls go through the shim (see shim.h for why). Slices
// passed here hold only integers and C handles, which cgo allows.

func hnd[T any](h T) C.vkc_handle { return *(*C.vkc_handle)(unsafe.Pointer(&h)) }

func openDeviceCalls(inst vk.Instance, dev vk.Device) (*C.vkc_dev, error) {
	p := C.vkc_dev_open(hnd(inst), hnd(dev))
	if p == nil {
		return nil, fmt.Errorf("vkGetDeviceProcAddr: the device lacks core Vulkan 1.0 entry points")
	}
	return p, nil
}

func closeDeviceCalls(p *C.vkc_dev) {
	if p != nil {
		C.vkc_dev_close(p)
	}
}

// memoryInfo is a physical device's memory types and heaps.
type memoryInfo struct {
	typeFlags []vk.MemoryPropertyFlags
	typeHeap  []uint32
	heapSize  []uint64
	heapFlags []vk.MemoryHeapFlags
}

func queryMemory(inst vk.Instance, pd vk.PhysicalDevice) memoryInfo {
	var m C.vkc_memory
	C.vkc_memory_properties(hnd(inst), hnd(pd), &m)
	var out memoryInfo
	for i := 0; i < int(m.type_count) && i < 32; i++ {
		out.typeFlags = append(out.typeFlags, vk.MemoryPropertyFlags(m.type_flags[i]))
		out.typeHeap = append(out.typeHeap, uint32(m.type_heaps[i]))
	}
	for i := 0; i < int(m.heap_count) && i < 16; i++ {
		out.heapSize = append(out.heapSize, uint64(m.heap_sizes[i]))
		out.heapFlags = append(out.heapFlags, vk.MemoryHeapFlags(m.heap_flags[i]))
	}
	return out
}

// computeFamily is the first queue family with compute, preferring one
// without graphics (a dedicated compute queue is not shared with a desktop).
func computeFamily(inst vk.Instance, pd vk.PhysicalDevice) (family, timestampBits uint32, ok bool) {
	var flags, bits C.uint32_t
	f := C.vkc_compute_family(hnd(inst), hnd(pd), &flags, &bits)
	if f < 0 {
		return 0, 0, false
	}
	return uint32(f), uint32(bits), true
}

func (d *Device) createSetLayout(types []vk.DescriptorType) (vk.DescriptorSetLayout, error) {
	t := make([]C.uint32_t, max(len(types), 1))
	for i, x := range types {
		t[i] = C.uint32_t(x)
	}
	var out C.vkc_handle
	r := C.vkc_create_set_layout(d.calls, &t[0], C.uint32_t(len(types)), &out)
	if err := check("vkCreateDescriptorSetLayout", vk.Result(r), "%d bindings", len(types)); err != nil {
		return nil, err
	}
	return vk.DescriptorSetLayout(unsafe.Pointer(out)), nil
}

func (d *Device) createPipelineLayout(set vk.DescriptorSetLayout, push uint32) (vk.PipelineLayout, error) {
	var out C.vkc_handle
	r := C.vkc_create_pipeline_layout(d.calls, hnd(set), C.uint32_t(push), &out)
	if err := check("vkCreatePipelineLayout", vk.Result(r), "%d bytes of push constants", push); err != nil {
		return nil, err
	}
	return vk.PipelineLayout(unsafe.Pointer(out)), nil
}

func (d *Device) createComputePipeline(module vk.ShaderModule, layout vk.PipelineLayout, spec []uint32, subgroup uint32, full bool) (vk.Pipeline, vk.Result) {
	s := make([]C.uint32_t, max(len(spec), 1))
	for i, x := range spec {
		s[i] = C.uint32_t(x)
	}
	var out C.vkc_handle
	r := C.vkc_create_compute_pipeline(d.calls, hnd(d.cache.handle()), hnd(module), hnd(layout), &s[0], C.uint32_t(len(spec)), C.uint32_t(subgroup), b32(full), &out)
	return vk.Pipeline(unsafe.Pointer(out)), vk.Result(r)
}

func (d *Device) createDescriptorPool(maxSets uint32, types []vk.DescriptorType, counts []uint32) (vk.DescriptorPool, error) {
	t := make([]C.uint32_t, len(types))
	c := make([]C.uint32_t, len(types))
	for i := range types {
		t[i], c[i] = C.uint32_t(types[i]), C.uint32_t(counts[i])
	}
	var out C.vkc_handle
	r := C.vkc_create_descriptor_pool(d.calls, C.uint32_t(maxSets), &t[0], &c[0], C.uint32_t(len(types)), &out)
	if err := check("vkCreateDescriptorPool", vk.Result(r), "%d sets", maxSets); err != nil {
		return nil, err
	}
	return vk.DescriptorPool(unsafe.Pointer(out)), nil
}

// descriptorWrite is one binding of a set: a buffer range or a texel view.
type descriptorWrite struct {
	typ    vk.DescriptorType
	buffer vk.Buffer
	offset uint64
	size   uint64
	view   vk.BufferView
}

func (d *Device) writeSet(set vk.DescriptorSet, ws []descriptorWrite) {
	n := len(ws)
	if n == 0 {
		return
	}
	types := make([]C.uint32_t, n)
	bufs := make([]C.vkc_handle, n)
	offs := make([]C.uint64_t, n)
	ranges := make([]C.uint64_t, n)
	views := make([]C.vkc_handle, n)
	for i, w := range ws {
		types[i], bufs[i], offs[i], ranges[i], views[i] = C.uint32_t(w.typ), hnd(w.buffer), C.uint64_t(w.offset), C.uint64_t(w.size), hnd(w.view)
	}
	C.vkc_write_set(d.calls, hnd(set), C.uint32_t(n), &types[0], &bufs[0], &offs[0], &ranges[0], &views[0])
}

func (d *Device) cmdBarrier(cb vk.CommandBuffer, host bool) {
	h := C.int32_t(0)
	if host {
		h = 1
	}
	C.vkc_cmd_barrier(d.calls, hnd(cb), h)
}

func (d *Device) cmdCopy(cb vk.CommandBuffer, src, dst vk.Buffer, srcOff, dstOff, size uint64) {
	C.vkc_cmd_copy(d.calls, hnd(cb), hnd(src), hnd(dst), C.uint64_t(srcOff), C.uint64_t(dstOff), C.uint64_t(size))
}

func (d *Device) queueSubmit(cbs []vk.CommandBuffer) vk.Result {
	h := make([]C.vkc_handle, len(cbs))
	for i, cb := range cbs {
		h[i] = hnd(cb)
	}
	return vk.Result(C.vkc_queue_submit(d.calls, hnd(d.queue), &h[0], C.uint32_t(len(h)), hnd(d.fence)))
}
