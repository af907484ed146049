package vk

import (
	"fmt"
	"slices"
	"strings"

	"vkchat/runtime/vk/vulkan"
)

// tuning is every layout choice that depends on the kind of device rather
// than on the model: a CPU device (lavapipe) runs a workgroup's lanes one
// after another with its registers on a stack, a GPU runs thousands of
// lanes at once out of a register file. Keeping the choices in one value
// lets a test run the GPU layout on lavapipe, which is the only way CI
// executes those code paths.
type tuning struct {
	// mvBudget bounds the multiply-adds one mat-vec row pass unrolls (rows
	// × units per lane × unit size × tokens × matrices): the kernel keeps
	// units × tokens of x in registers and llvmpipe's compile time grows
	// faster than linearly with it (8192: a few seconds per kernel). A GPU
	// has a register file, not a stack: a quarter of that keeps x in
	// registers.
	mvBudget int
	// mvPassesDecode and mvPassesPrefill are how many row passes a team
	// makes after loading (and normalising) its slice of x once. On a CPU
	// device that amortises the load over few, long workgroups; a batch's
	// slice is nt times larger, so it takes more passes (4 were far slower
	// than 16 with the norm fused: docs/benchmarks.md, "vk: row passes per
	// load of x (tuning.mvPassesPrefill)"). A GPU wants as many workgroups
	// as passes.
	mvPassesDecode, mvPassesPrefill int
	// prefillNT is the fewest tokens per pass a prefill mat-vec may take
	// to fit the budget; past it K is split into chunks instead. On a CPU
	// device dequantizing is the cost, so each weight should serve 8
	// tokens even at the price of a dispatch per chunk (the 1B shape's
	// prefill on lavapipe gains clearly; the 110M shape needs no chunks:
	// docs/benchmarks.md, "2026-12-02: prefill mat-vecs on CPU devices
	// keep 8 tokens per pass"). On a GPU every chunk is another barrier
	// over the whole matrix.
	prefillNT int
	// orderedAttention walks the positions in order with llama.cpp's F16
	// rounding: a CPU device runs a workgroup's lanes one after another
	// anyway, and the ordered form is the one whose roundings match the CPU
	// backend's (TestStoriesLogitsMatchCPU: 9e-8; the GPU form's other
	// summation order moves F16 roundings, 1e-6..1e-5 on the synth models).
	// It is also the faster form there, by a wide margin
	// (BenchmarkAttentionDecode: docs/benchmarks.md, "vk: ordered attention
	// against the GPU form on lavapipe (tuning.orderedAttention)"): on
	// llvmpipe the GPU form's shared memory is a per-lane loop and its
	// barriers split the workgroup's program. GPUs take the GPU form (attention.comp): no per-lane arrays by head
	// size, positions spread over the lanes.
	orderedAttention bool
	// attnTokenLanes runs a prefill's ordered attention with a token on
	// each lane (main_rows): on llvmpipe a workgroup is one SIMD vector,
	// and spreading a head's dimensions over it costs a cross-lane sum
	// per position and head and repeats the softmax's scalar steps on
	// every lane (BenchmarkAttentionPrefill and end to end: docs/benchmarks.md,
	// "2026-12-05: a prefill's ordered attention with a token on each lane
	// (issue 23)").
	attnTokenLanes bool
	// attnLanes is the GPU form's workgroup size (a tile of positions for
	// scores; 128 is 4 NVIDIA warps, 2 AMD wave64s); attnGran the split
	// granule: a split's positions are a multiple of it (one warp's worth,
	// so a short split still fills the score phase's first subgroup).
	attnLanes, attnGran int
	// attnRows is the query rows (tokens × the heads sharing a KV head) a
	// prefill's GPU-form workgroup takes: its keys and values are fetched
	// once for all of them. 16 keeps a lane's accumulators at 16·E and
	// the shared memory at 24 KiB for head size 128 (an 8B: 4 tokens).
	attnRows int
	// attnWaves is the workgroups per compute unit a decode attention aims
	// for: splits = ceil(units × waves / KV heads), so an 8B (8 KV heads)
	// on a 4090 (128 SMs) takes 32 splits of the live span. Two let one
	// workgroup's barrier waits overlap another's loads; more would add
	// partials (G × (HD+2) floats per split) for little.
	attnWaves int
	// deviceHead is what backend.HeadAuto means: on a CPU device the logits
	// are already in host memory, so reading them is a copy and the head
	// kernel's barriers cost more than they save (stories260K decode on
	// lavapipe is slower with the head: docs/benchmarks.md, "2026-12-02:
	// the next-token head stays off on CPU devices").
	deviceHead bool
	// deviceResident keeps the step parameters and the logits in
	// device-local memory: on a discrete GPU host-visible memory is read
	// across PCIe, by every kernel for the step's parameters (one copy at
	// the start of the command buffer instead) and by the head's pass
	// over the vocabulary's logits (read back only when the sampler needs
	// them). On a CPU device all memory is host memory: nothing to gain.
	deviceResident bool
	// sharedX takes the mat-vec kernel that stages x once per workgroup in
	// shared memory (matvec_sg.comp) wherever x fits: a GPU keeps a few
	// rows per workgroup busy without per-lane copies of x in registers
	// (which spill past a GPU's register limit) and without splitting K
	// into dispatches, each a barrier over the whole matrix. On a CPU
	// device the register kernel is the fast one.
	sharedX bool
	// matmul takes the tiled product (matmul.go) for prefill. On a CPU
	// device it runs faster per CPU-second than the 8-token mat-vec for
	// the 32-weight units (BenchmarkPrefillProduct, since its weight-major
	// sums) and never splits K. For the K-quants' 256-weight units the
	// mat-vec would be faster there, but its other summation order flips
	// the int8 rounding of an occasional activation, and
	// synth-gemma4-Q4_K_M, a chaotic model, then leaves llama.cpp's
	// reference bounds, which the tiled product keeps it within
	// (docs/benchmarks.md, "2026-12-06: the CPU layout's tiled product sums
	// weight-major (issue 23)"), so every quantized type keeps it. The GPU
	// layout's
	// variant (x staged in shared memory) is checked on lavapipe by
	// TestMatmulTypes but left off in the GPU layout until a GPU run
	// measures it: llvmpipe, where CI runs that layout, turns its shared
	// loads into per-lane loops and takes minutes to build and run a
	// model's prefill with it (TestGPULayoutMatchesCPU timed out).
	// MatmulEnv turns it on or off on either layout (gpu-check measures
	// a GPU's pp512 both ways).
	matmul bool
	// mmDot is how the tiled product (dense and grouped) sums a quantized
	// sub-block: as floats (dotFloat), or with packed int8 dot products
	// (matmul.comp's IDOT variants) where the device says they run in
	// hardware (dotIntAccelerated: NVIDIA since Turing, AMD RDNA2+, Intel
	// Xe report integerDotProduct4x8BitPackedSignedAccelerated) or wherever
	// it has them at all (dotInt, forced by MatmulEnv). Both give the same
	// bits. Unlike the integer-dot mat-vec this costs no extra dispatch
	// (the product rounds x once per product anyway) and takes a
	// multiply-add from ~2.3 instructions to ~0.5 (cost.md), so the GPU
	// layout takes it where accelerated without waiting for a measurement;
	// llvmpipe lowers OpSDot to scalar code and reports it unaccelerated.
	mmDot dotForm
	// moeGrouped takes the grouped expert product (moe.go: pairs grouped
	// by expert on the device, the tiled kernel over each expert's pairs)
	// for a mixture-of-experts prefill. On a CPU device it goes with
	// matmul (it prefills the MoE bench shape faster on lavapipe:
	// docs/benchmarks.md, "2026-12-04: MoE prefill groups the pairs by
	// expert (issue 24)").
	// On a GPU it is on although matmul is not: the dense mat-vec there
	// serves several tokens per weight read, the expert mat-vec one pair,
	// so a 64-token chunk of a 128-expert top-8 model streams each chosen
	// expert's rows about 4 times per layer (512 pairs over 128 experts)
	// and issues ~5.6 instructions per multiply-add, where the grouped
	// product's 4-pair tiles read them about once and issue ~2-3
	// (runtime/vk/cost.md). Unmeasured on a GPU; lavapipe checks that
	// layout's kernel (TestMoEGroupedProduct, TestPrefillGroupsExperts).
	moeGrouped bool
	// intDot takes the integer-dot mat-vec (matvec_idot.go) for quantized
	// weights where the device has shaderIntegerDotProduct: x rounded to
	// int8 once per input and 4-way int8 dot products, ~1.1 instructions
	// per Q4_0 weight against the float kernels' ~5.6 (cost.md). Off in
	// both layouts until a GPU measures it (MatvecEnv forces it; gpu-check
	// runs the 1B's decode both ways): the cost model has the float
	// kernels bound by bandwidth and dispatches at decode, not by issue,
	// so the rounding's dispatch and barrier per input cost more than the
	// instructions save (predicted slower on the 1B and the 8B:
	// runtime/vk/cost.md, "Kernels") until that rounding is folded into
	// x's producers. On lavapipe llvmpipe lowers OpSDot to scalar code,
	// and forcing it on there decodes several times slower
	// (docs/benchmarks.md, "vk: the integer-dot mat-vec on lavapipe
	// (tuning.intDot)").
	intDot bool
	// ropeInQKV does a decode step's Q/K norm, rotation and cache write
	// in the last workgroup of the Q|K|V product (the ROPE_EPI variants of
	// the shared-x and integer-dot mat-vecs)
	// instead of a rope.comp dispatch after it: one dispatch and barrier
	// fewer per layer (a fixed cost that is a large share of a small
	// model's step on a big GPU: runtime/vk/cost.md, "Fixed costs per
	// decode step") for the same work on one workgroup either way. The
	// CPU layout's register mat-vec has no such epilogue; its dispatches
	// cost little there.
	ropeInQKV bool
	// spinFence polls a step's fence from shortly before its expected
	// end (vulkan.Device.SpinWait): on a GPU the host's wake-up from a
	// blocking wait is a share of a short decode step; on a CPU device the
	// polling thread would take a core from the driver's workers.
	spinFence bool
	// cpuRounding makes a quantized model round as the CPU backend, as an
	// all-F32 model does on every device (weights.cpuOrder): its products
	// through the exact kernel (matvec_exact.go) and the ops around them
	// (norms, activations, attention's f16 path) in the CPU's order,
	// where every matrix's type has an exact kernel (weights.exactQuant).
	// The Vulkan backend then gives the CPU backend's bits, op by op and
	// end to end, which holds it to llama.cpp's references through the
	// near-ties of routing and 8-bit roundings that a device order flips
	// (synth-deepseek2-Q4_K_M's expert at one position); the exact kernel
	// takes a row per lane and is the slower one (docs/benchmarks.md,
	// "vk: the exact quantized mat-vec (matvec_exact.go)"). On a CPU device (lavapipe), which runs Vulkan for its
	// tests rather than its speed (the CPU backend is the faster one
	// there), that is the default; a GPU keeps its kernels' own orders
	// (held to the references by TestArchsDeviceRoundingMatchLlamaCpp).
	// RoundingEnv forces either on any device.
	cpuRounding bool
}

// dotForm is how a product sums a quantized sub-block (tuning.mmDot).
type dotForm uint8

const (
	dotFloat          dotForm = iota // integer products summed as floats, exactly
	dotIntAccelerated                // packed int8 dot products where the device accelerates them
	dotInt                           // packed int8 dot products wherever the device has them
)

// stepKind and logitsKind are where the step parameters and the logits live.
func (t tuning) stepKind() vulkan.MemKind   { return t.residentKind() }
func (t tuning) logitsKind() vulkan.MemKind { return t.residentKind() }

func (t tuning) residentKind() vulkan.MemKind {
	if t.deviceResident {
		return vulkan.MemDevice
	}
	return vulkan.MemHost
}

var (
	cpuTuning = tuning{cpuRounding: true, matmul: true, moeGrouped: true, mvBudget: 8192, mvPassesDecode: 4, mvPassesPrefill: 16, prefillNT: 8, orderedAttention: true, attnTokenLanes: true, deviceHead: false}
	gpuTuning = tuning{mvBudget: 2048, mvPassesDecode: 1, mvPassesPrefill: 1, prefillNT: 1, orderedAttention: false, attnLanes: 128, attnGran: 32, attnWaves: 2, attnRows: 16, deviceHead: true, deviceResident: true, sharedX: true, moeGrouped: true, mmDot: dotIntAccelerated, spinFence: true, ropeInQKV: true}
)

// tuningFor picks the layout for a device type ("discrete", "integrated",
// "virtual", "cpu", "other"): everything but a CPU device is laid out as a
// GPU.
func tuningFor(deviceType string) tuning {
	if deviceType == "cpu" {
		return cpuTuning
	}
	return gpuTuning
}

// mvPasses is the tuning's row passes for nt tokens per pass.
func (t tuning) mvPasses(nt int) int {
	if nt > 1 {
		return t.mvPassesPrefill
	}
	return t.mvPassesDecode
}

// attnSplits is how many split-K workgroups per KV head a decode attention
// over a cache of slots positions records on a device of units compute
// units (0: no split-K, one workgroup per KV head): enough for attnWaves
// workgroups per unit, no more than slots/attnGran (a split's least
// positions). The recorded count serves every step: at each step the
// kernels cut the live span into attnChunk's chunks and leave the splits
// past it idle.
func (t tuning) attnSplits(kvHeads, slots, units int) int {
	if t.orderedAttention || t.attnGran <= 0 || kvHeads <= 0 {
		return 0
	}
	z := (units*max(t.attnWaves, 1) + kvHeads - 1) / kvHeads
	z = min(z, (slots+t.attnGran-1)/t.attnGran)
	if z < 2 {
		return 0
	}
	return z
}

// attnChunk is attnsplit.glsl's rule, for the tests and the cost model:
// the positions per split and the live splits when a span of live
// positions (>= 1) is cut over z splits in multiples of gran.
func attnChunk(live, z, gran int) (chunk, splits int) {
	per := (live + z - 1) / z
	chunk = (per + gran - 1) / gran * gran
	return chunk, (live + chunk - 1) / chunk
}

// The variables that force one choice of the layout on any device, so
// that a run can measure one choice against the other (gpu-check does on a
// GPU; empty: the device's own).
const (
	// LayoutEnv: "gpu" or "cpu", the whole layout of the other kind of
	// device (the GPU layout on lavapipe: its roundings against a
	// reference, without a GPU), before the variables below refine it.
	LayoutEnv = "VKCHAT_VK_LAYOUT"
	// AttentionEnv: "ordered", "ordered-dims" or "gpu": the ordered form
	// (a prefill's with token lanes, or always with the lanes over a
	// head's dimensions), or the GPU form, on any device.
	AttentionEnv = "VKCHAT_VK_ATTENTION"
	// MatvecEnv: "float" or "intdot", the mat-vec kernel family.
	MatvecEnv = "VKCHAT_VK_MATVEC"
	// MatmulEnv: "off", "float" or "intdot": the dense prefill without
	// the tiled product (the mat-vec over a few tokens per pass), or with
	// it summing as floats or with packed int8 dot products (those also
	// in the grouped expert product).
	MatmulEnv = "VKCHAT_VK_MATMUL"
	// SpinEnv: "on" or "off", the fence wait's polling.
	SpinEnv = "VKCHAT_VK_SPIN"
	// RopeEnv: "fused" or "separate", a decode step's rotation in the
	// Q|K|V product's last workgroup or in a dispatch of its own.
	RopeEnv = "VKCHAT_VK_ROPE"
	// RoundingEnv: "cpu" or "device", a quantized model rounding as the
	// CPU backend (tuning.cpuRounding) or in the device kernels' orders.
	RoundingEnv = "VKCHAT_VK_ROUNDING"
)

// tuningEnv is each variable's forms, in the order an error lists them,
// and what each sets.
var tuningEnv = []struct {
	name  string
	forms []string
	set   func(t *tuning, form string)
}{
	// first: the others refine the layout it picks
	{LayoutEnv, []string{"gpu", "cpu"}, func(t *tuning, form string) { *t = tuningFor(form) }},
	{AttentionEnv, []string{"ordered", "ordered-dims", "gpu"}, func(t *tuning, form string) {
		t.orderedAttention = form != "gpu"
		t.attnTokenLanes = form == "ordered"
		if !t.orderedAttention {
			t.attnLanes, t.attnGran, t.attnWaves, t.attnRows = gpuTuning.attnLanes, gpuTuning.attnGran, gpuTuning.attnWaves, gpuTuning.attnRows
		}
	}},
	{MatvecEnv, []string{"float", "intdot"}, func(t *tuning, form string) { t.intDot = form == "intdot" }},
	{MatmulEnv, []string{"off", "float", "intdot"}, func(t *tuning, form string) {
		t.matmul = form != "off"
		switch form {
		case "float":
			t.mmDot = dotFloat
		case "intdot":
			t.mmDot = dotInt
		}
	}},
	{SpinEnv, []string{"on", "off"}, func(t *tuning, form string) { t.spinFence = form == "on" }},
	{RopeEnv, []string{"fused", "separate"}, func(t *tuning, form string) { t.ropeInQKV = form == "fused" }},
	{RoundingEnv, []string{"cpu", "device"}, func(t *tuning, form string) { t.cpuRounding = form == "cpu" }},
}

// withEnv is t with the choices getenv forces (tuningEnv); a form that
// is not one of a variable's is an error that names the variable and its
// forms.
func (t tuning) withEnv(getenv func(string) string) (tuning, error) {
	for _, v := range tuningEnv {
		form := getenv(v.name)
		if form == "" {
			continue
		}
		if !slices.Contains(v.forms, form) {
			return t, fmt.Errorf("%s=%q: want %s", v.name, form, strings.Join(v.forms, " or "))
		}
		v.set(&t, form)
	}
	return t, nil
}
