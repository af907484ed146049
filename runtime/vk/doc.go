// Package vk is the Vulkan compute backend: the whole forward pass of every
// supported architecture, executed from the model's plan (runtime/plan)
// alone, as compute shaders
// (shaders/) recorded and submitted through the generic Vulkan layer in
// runtime/vk/vulkan (imported as vulkan; this package never
// imports vulkan-go itself, and vulkan never imports this package).
//
// Layout, by responsibility (every non-test file but this one):
//
//	gpu.go               the device as the forward pass uses it: tuning, matrix part size, shaders by name
//	tuning.go            the kernel layout for CPU devices and for GPUs
//	layout.go, matrix.go weights in a structure-of-arrays texel layout, split by rows
//	convert.go           little-endian packing of floats and words for buffers and push constants
//	matvec.go            the mat-vec/mat-mat kernel's planning and recording
//	matvec_shared.go     the GPU layout's mat-vec with x staged in shared memory (matvec_sg.comp)
//	matvec_idot.go       the integer-dot mat-vec (matvec_id.comp): x rounded to int8 once per input
//	matmul.go            the prefill product (matmul.comp): x rounded once, tiles of rows × tokens
//	matvec_exact.go      quantized products rounded as the CPU backend's (matvec_exact.comp), for Matrix.cpuOrder
//	attention.go         attention over a layer's KV cache (attention.comp): ordered or split-K, its lanes and splits
//	rope.go              a layer's Q/K norm, rotation and cache write (rope.comp, or the Q|K|V product's epilogue)
//	weights.go           a model's weights on the device
//	activations.go       a step's working buffers on the device, the logits and the head's result
//	plan.go              each layer's RoPE table, window, cache slot and geometry, taken from the plan
//	exec.go              the plan compiled into recording steps: one function per op kind, the
//	                     peephole that fuses runs of ops into one kernel, refusal of the rest
//	graph.go             the command buffers, recorded once from the steps, and the step buffer they read
//	moe.go               a mixture-of-experts FFN: router, route, expert mat-vecs, combine
//	deltanet.go          Gated DeltaNet layers (qwen35, qwen35moe): conv, delta rule, Q gate
//	shortconv.go         lfm2's short-convolution layers
//	mamba2.go            Mamba2 layers (nemotron_h, granitehybrid): conv, scan, grouped norm; ReLU² FFN
//	mla.go               multi-head latent attention (deepseek2) in the absorbed form: the heads' products as expert mat-vecs over (token, head) pairs around attention.comp
//	ple.go               Gemma 4's layer output scale and per-layer embeddings
//	cache.go             what a session keeps on the device: KV caches (rings for windows), tokens, recurrent state
//	kvquant.go           a block-quantized KV cache: the write's rotation and quantization (kvquant.comp), attention on it (attnq.comp)
//	state.go             the recurrent layers' state: checkpoints and rewind (backend.StateBackend)
//	backend.go           backend.Backend: New, Forward, Memory, Close
//	head.go              backend.HeadBackend: the next-token head (topk.comp) read instead of the vocabulary
//	lens.go              backend.LensBackend: each layer's residual output through the head, on demand
//	mtp.go               backend.MTPBackend: the hidden rows after the output norm, the MTP head on its own plan
//	profile.go           per-dispatch timings and the read-bandwidth bound
//	errors.go            device loss reported as backend.ErrDeviceLost
//	unsupported.go       New's refusal: ops no kernel computes (exec.go) and weight types no kernel reads
//
// Which device it runs on is vulkan.Choose's answer (or the index asked
// for); what is a texel view, a barrier or a hung device is vulkan's.
//
// What the design follows from (measured on lavapipe, Mesa 22.3, 2 cores):
// storage-buffer loads are several times slower than texel fetches there
// (docs/benchmarks.md, "vk/vulkan: storage-buffer loads against texel
// fetches on lavapipe"). So every bulk read is a
// texelFetch of a R32G32B32A32_UINT (or narrower) view, weights are
// repacked at load so each quant field is a contiguous run of texels, and
// storage buffers are only written. A team of up to 8 lanes owns a
// contiguous block of rows; each lane holds its slice of x (and of up to 8
// tokens' x in prefill) in registers and streams its units of each row; the
// compile-time loop bounds come from specialization constants so
// everything inside a row pass unrolls. Each lane rounds its x slice to the
// weight type's vec_dot_type in registers (shaders/actquant.glsl: 8-bit
// blocks for quantized weights, f16/bf16), as llama.cpp's CPU backend and
// our reference backend do, so the two backends differ by float summation
// order only. On CPU devices the attention kernel walks positions in order
// with llama.cpp's F16 rounding of the value sum (attention.comp, ORDERED)
// for the same reason; GPUs keep positions spread over the lanes. F32 rows
// are one lane's each there, summed with exact FMAs in the CPU backend's
// order (matvec.comp's ORDER): ggml_vec_dot_f32's where llama.cpp takes it
// whatever the batch (a MoE's experts, rows not a multiple of 8 long),
// tinyBLAS's for the other dense rows of an all-F32 model
// (Matrix.cpuOrder), with the RMS norm folded into them and
// residual.comp's summing squares as ggml's (a double sum), so that an
// F32 model gives the CPU backend's bits where attention does too (its
// f16 cache read by attnq.comp's f16 path, MLA's too; the gated units'
// SiLU and swiglu_oai as the CPU's, glu.glsl ACT 3 and 4; the soft-caps'
// tanh, attention's and the final logits', as the CPU's tanhf: common.glsl
// tanh_exact, CAP 2).
// A quantized model rounds so too on a CPU device (tuning.cpuRounding,
// weights.exactQuant) where every matrix's type has an exact kernel:
// matvec_exact.comp rounds x as runtime/quant does and gives each row to
// one lane (with up to 4 of a batch's tokens) that sums the row's blocks
// in the type's Go kernel's order. GPUs keep the kernels' own orders.
// GPUs also
// take another mat-vec (matvec_sg.comp): a workgroup stages x, rounded the
// same way, once in shared memory and whole subgroups reduce rows, so x is
// not copied into every lane's registers and K is never split into
// dispatches.
//
// Each decode step is one submission of a command buffer recorded at load;
// the step's token ids, position and rope angles are written to a small
// host-visible buffer. Under the GPU layout (tuning.go) the command buffer
// copies it to device-local memory first and the logits stay on the device
// (a discrete GPU reads host-visible memory across PCIe); on CPU devices
// the kernels read the host-visible buffers directly.
//
// Multi-token passes (prefill, and eval's all-logits head) take the tiled
// product instead of the mat-vec: x is rounded to the weight's vec_dot_type
// once per product and every weight is read once per tile of tokens, with
// the same integer sums. cost.md beside this file models what each kernel
// should cost on a GPU, with predicted tok/s to hold a first run against.
//
// Checks that need no GPU: tests swap the tuning to run the GPU layout on
// lavapipe (layout_gpu_test.go) and leave device memory unmapped to run a
// discrete GPU's staging path (vulkan.Device.Unmapped); make vk-validate
// runs both packages' tests under the Khronos validation layer.
package vk
