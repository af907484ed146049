// Package vulkan is vkchat's generic Vulkan compute layer: it opens a
// device, places buffers in its memory, makes pipelines from SPIR-V, records
// dispatches with the barriers they need and submits them. It knows nothing
// of models, weights or what a shader computes: its user (runtime/vk, the
// forward pass) passes SPIR-V words, bindings and push constants.
//
// It runs over vulkan-go (imported as vk) with a small cgo shim (shim.c)
// for what vulkan-go's 1.1 headers cannot express, the Vulkan 1.2/1.3
// queries and device creation through pNext-chained structs, and for the
// calls taking arrays of structs, which vulkan-go frees from a finalizer
// that can run during the call (crashes in vkCreateComputePipelines under
// load). The loader is opened at run time (dlopen), never linked, so a
// binary runs on a machine without Vulkan and reports ErrNoVulkan.
//
// Layout, by responsibility (every non-test file but this one):
//
//	loader.go            the loader (opened at run time), feature/property queries, device creation
//	shim.c, shim.h       the cgo shim behind loader.go and calls.go
//	calls.go             the shim's struct-array calls (pipelines, descriptors, barriers, submit)
//	physical.go          enumeration, DeviceInfo, Choose: the one device choice
//	device.go            the logical device and its lifetime
//	memory.go, buffer.go memory types, sub-allocation in blocks, buffers, texel views, staging
//	pipeline.go          pipelines from SPIR-V with specialization, required subgroup size, on-disk cache
//	reflect.go           descriptor types read from the SPIR-V
//	command.go           command buffers, descriptor sets, barriers, timestamps, submission
//	fencewait.go         waiting for a submission: sleep, then poll shortly before its expected end (SpinWait)
//	errors.go            Error (call, VkResult, what it was doing), ErrTimeout, ErrDeviceLost
//	validation.go        the validation layer and its recording messenger (VKCHAT_VALIDATION=1)
//
// The exported API: Devices lists DeviceInfo (heaps, limits, Features,
// subgroup sizes) and Choose picks among them, which Open, `vkchat devices`
// and the engine's --backend auto all go through, so they cannot disagree.
// On a Device: NewBuffer (MemDevice or MemHost), Kernel (a pipeline from
// SPIR-V and specialization constants), NewRecorder (Dispatch, Upload,
// Fill, Barrier, timestamps, Work), Submit, Zero, Idle, Close.
//
// Why it is built the way it is:
//
// Texel views. On lavapipe (Mesa 22.3, 2 cores) storage-buffer loads
// compile to a scalar loop over the 8 lanes with a bounds check per
// component, whatever the access pattern, while texel-buffer fetches go
// through the sampler's AVX2 gathers, about ten times as fast
// (docs/benchmarks.md, "vk/vulkan: storage-buffer loads against texel
// fetches on lavapipe"). So every buffer
// may also be bound as a texel buffer: an Arg names the view's Format, the
// view is made once per range and format, and reflection reads from the
// SPIR-V which bindings are texel buffers.
//
// Memory. Buffers are sub-allocated from 256 MiB blocks (drivers cap the
// number of allocations, 4096 on many) and freed only with the device.
// MemDevice prefers a device-local type that is also host-visible and
// coherent on the largest device-local heap (UMA, resizable BAR, lavapipe),
// so uploads are plain copies; elsewhere data goes through a coherent
// staging buffer, never through flushes of non-coherent memory. Each heap
// is charged for what is placed on it and an allocation past a heap is
// refused before the driver is asked (lavapipe grants it and fails later).
//
// Barriers. A Recorder tracks the ranges written since the last barrier and
// places one global memory barrier only before a dispatch that touches one
// of them; Arg.Span narrows a binding to the part a dispatch touches, so
// dispatches writing disjoint parts of one buffer share a barrier.
//
// Subgroups. Without subgroup-size control a driver that compiles for
// several widths (Intel SIMD8-32, AMD wave32/64) picks one per pipeline, so
// DeviceInfo.SureSubgroup is the size a kernel can count on, and Kernel
// requires the largest size the workgroup fills wherever Vulkan 1.3 allows.
//
// Failure. Every submission waits on a fence with a timeout: past it the
// device is hung (ErrTimeout, not device loss: the work may still be
// running and own its buffers), takes no more work and destroys nothing
// until the work is seen to finish. VKCHAT_VALIDATION=1 (validation.go)
// runs every instance under the Khronos validation layer and fails
// Device.Close on any message (make vk-validate).
package vulkan
