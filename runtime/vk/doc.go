// Package vk is the Vulkan compute backend: the whole forward pass of every
// supported architecture, as arch.Config's block recipe declares it, as
// compute shaders (shaders/), over vulkan-go with a small cgo shim
// (shim.c) for the Vulkan 1.2/1.3 queries and device creation vulkan-go's
// 1.1 headers cannot express, and for the calls taking arrays of structs,
// which vulkan-go frees from a finalizer that can run during the call.
//
// Layout, by responsibility:
//
//	loader.go, shim.c    the loader, feature/property queries, device creation
//	calls.go             the shim's struct-array calls (pipelines, descriptors, barriers, submit)
//	physical.go          enumeration, device choice, DeviceInfo for `vkchat devices`
//	device.go            the logical device and its lifetime
//	memory.go, buffer.go memory types, sub-allocation in blocks, buffers, texel views, staging
//	pipeline.go          pipelines from embedded SPIR-V with specialization, on-disk cache
//	reflect.go           descriptor types read from the SPIR-V
//	command.go           command buffers, descriptor sets, barriers, timestamps, submission
//	layout.go, matrix.go weights in a structure-of-arrays texel layout, split by rows
//	matvec.go            the mat-vec/mat-mat kernel's planning and recording
//	matvec_shared.go     the GPU layout's mat-vec with x staged in shared memory (matvec_sg.comp)
//	weights.go           a model's weights on the device
//	recipe.go            the block recipe resolved: multipliers, caps, RoPE tables, ring caches
//	graph.go             the forward pass as dispatches
//	backend.go           backend.Backend: New, Forward, Memory, Close
//	head.go              backend.HeadBackend: the next-token head (topk.comp) read instead of the vocabulary
//	profile.go           per-dispatch timings and the read-bandwidth bound
//	validation.go        the validation layer and its recording messenger (VKCHAT_VALIDATION=1)
//
// What the design follows from (measured on lavapipe, Mesa 22.3, 2 cores):
// storage-buffer loads compile to a scalar loop over the 8 lanes with a
// bounds check per component, ~0.5-0.9 GB/s whatever the access pattern,
// uniform addresses included; texel-buffer fetches go through the sampler's
// AVX2 gathers at ~8 GB/s. So every bulk read is a texelFetch of a
// R32G32B32A32_UINT (or narrower) view, weights are repacked at load so each
// quant field is a contiguous run of texels, and storage buffers are only
// written. A team of up to 8 lanes owns a contiguous block of rows; each lane
// holds its slice of x (and of up to 8 tokens' x in prefill) in registers and
// streams its units of each row; the compile-time loop bounds come from
// specialization constants so everything inside a row pass unrolls. Each
// lane rounds its x slice to the weight type's vec_dot_type in registers
// (shaders/actquant.glsl: 8-bit blocks for quantized weights, f16/bf16),
// as llama.cpp's CPU backend and our reference backend do, so the two
// backends differ by float summation order only. On CPU devices the
// attention kernel walks positions in order with llama.cpp's F16 rounding
// of the value sum (attention.comp, ORDERED) for the same reason; GPUs keep
// positions spread over the lanes. GPUs also take another mat-vec
// (matvec_sg.comp): a workgroup stages x, rounded the same way, once in
// shared memory and whole subgroups reduce rows, so x is not copied into
// every lane's registers and K is never split into dispatches.
//
// Each decode step is one submission of a command buffer recorded at load;
// the step's token ids, position and rope angles are written to a small
// host-visible buffer. Under the GPU layout (tuning.go) the command buffer
// copies it to device-local memory first and the logits stay on the device
// (a discrete GPU reads host-visible memory across PCIe); on CPU devices
// the kernels read the host-visible buffers directly.
//
// Checks that need no GPU: VKCHAT_VALIDATION=1 (validation.go) runs every
// instance under the Khronos validation layer and fails Device.Close on any
// message (make vk-validate); a submission past the fence timeout is
// ErrTimeout, and the hung device then takes no work and destroys nothing.
package vk
