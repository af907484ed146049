package vk

import (
	"fmt"
	"math"

	"vkchat/runtime/vk/vulkan"
)

// attnOp is one attention over a layer's KV cache (attention.comp), as the
// forward pass and the kernel tests record it.
type attnOp struct {
	label                     string
	q, kc, vc, out, step      *vulkan.Buffer
	sinks                     *vulkan.Buffer // a logit per query head, or nil
	part                      *vulkan.Buffer // split-K partials [token][head][split][hd+2], with splits
	arrive                    *vulkan.Buffer // split-K: finished splits per (token, KV head), zero between steps
	hd, heads, kvHeads        int
	slots, window, qstride    int
	kvf32                     bool
	scale, cap                float32 // scale already divided by cap where cap != 0
	capExact                  bool    // the soft-cap's tanh as the CPU backend's tanhf (a model rounding as the CPU's)
	tokens                    int     // workgroups per KV head in y (the kernel skips those past the step's count)
	splits                    int     // split-K workgroups per (KV head, token): 0 for none
	ordered                   bool
	tokenLanes                bool // the ordered form with a token on each lane (a prefill on a CPU device)
	qtile                     int  // the GPU form's tokens per workgroup (0 or 1: one)
	lanes, gran, subgroupSure int  // the GPU form's workgroup size and split granule; the device's sure subgroup
	roff                      int  // attnq.comp's ROFF: where the CPU's first key dimension is stored (MLA's rows)
}

// capMode is the kernels' CAP constant: 0 no soft-cap, 1 with the
// device's tanh, 2 with tanh_exact (common.glsl), the CPU backend's bits.
func (op *attnOp) capMode() uint32 {
	switch {
	case op.cap == 0:
		return 0
	case op.capExact:
		return 2
	}
	return 1
}

// attnShared is the GPU form's shared memory in bytes (attention.comp's
// sq, sp, sr and sacc) for lanes lanes and g query rows per workgroup
// (a tile's tokens × the heads sharing a KV head).
func attnShared(hd, g, lanes, sgMin int, kvf32 bool) int {
	e := 2
	if kvf32 {
		e = 1
	}
	u := hd / e
	npg := 1
	if u <= lanes {
		npg = lanes / u
	}
	nsg := (lanes + sgMin - 1) / sgMin
	return 4 * (g*hd + g*lanes + g*nsg + max(npg-1, 0)*g*hd)
}

// attnLanes is the GPU form's workgroup size on d for a head size and
// group: the tuning's, halved while its shared memory would not fit.
func (d *gpu) attnLanes(hd, g int, kvf32 bool) int {
	sg := int(d.Info.SureSubgroup())
	lanes := max(d.tune.attnLanes, sg)
	lanes = min(lanes, int(d.Info.Limits.MaxWorkGroupSize))
	for lanes > sg && attnShared(hd, g, lanes, sg, kvf32) > int(d.Info.Limits.MaxSharedMemory) {
		lanes /= 2
	}
	return lanes
}

// attnFor fills op's form from the device's tuning: the ordered form, or
// the GPU form with its lanes and, for a decode step (one token), as many
// splits as tuning.attnSplits gives the layer.
func (d *gpu) attnFor(op *attnOp, decode bool) {
	op.subgroupSure = int(d.Info.SureSubgroup())
	op.ordered = d.tune.orderedAttention
	if op.ordered {
		op.tokenLanes = !decode && d.tune.attnTokenLanes
		return
	}
	g := op.heads / op.kvHeads
	op.lanes = d.attnLanes(op.hd, g, op.kvf32)
	op.gran = d.tune.attnGran
	if decode {
		op.splits = d.tune.attnSplits(op.kvHeads, op.slots, d.computeUnits())
		return
	}
	op.qtile = d.attnTile(op.hd, g, op.lanes, op.tokens, op.kvf32)
}

// attnTile is how many tokens a prefill's GPU-form workgroup takes on d:
// tuning.attnRows query rows (tokens × the group's heads), no more tokens
// than the step has, halved while the rows' shared memory would not fit.
func (d *gpu) attnTile(hd, g, lanes, tokens int, kvf32 bool) int {
	qt := max(1, min(d.tune.attnRows/max(g, 1), tokens))
	for qt > 1 && attnShared(hd, qt*g, lanes, int(d.Info.SureSubgroup()), kvf32) > int(d.Info.Limits.MaxSharedMemory) {
		qt /= 2
	}
	return qt
}

// computeUnits is the device's count of SMs or CUs where the driver tells
// it (VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties), else a
// middling GPU's: it only sizes how many workgroups split-K aims for, so a
// wrong guess costs speed, not correctness.
func (d *gpu) computeUnits() int {
	if n := int(d.Info.ComputeUnits); n > 0 {
		return n
	}
	return defaultComputeUnits
}

// defaultComputeUnits: between an integrated GPU (a few to 32 units) and a
// big discrete one (128-132): enough splits to fill the former twice over.
const defaultComputeUnits = 32

// recordAttention records op: the attention dispatch over (KV heads,
// tokens, splits) workgroups (with token lanes, tiles of a subgroup's
// tokens; in the GPU form's prefill, tiles of op.qtile tokens). With
// splits the last split of each (token, KV head) to finish merges them in
// the same dispatch (attention.comp's merge_splits).
func (d *gpu) recordAttention(r *vulkan.Recorder, op attnOp) error {
	g := op.heads / op.kvHeads
	kvf32 := flag(op.kvf32)
	sg := uint32(op.subgroupSure)
	capOn := op.capMode()
	sink := flag(op.sinks != nil)
	dum, err := d.dummy()
	if err != nil {
		return err
	}
	sinks, part, arrive := op.sinks, vulkan.R(dum), vulkan.R(dum)
	if sinks == nil {
		sinks = dum
	}
	if op.splits > 0 {
		if op.part == nil || op.arrive == nil {
			return fmt.Errorf("attention %s: split-K needs its partials and arrival counters", op.label)
		}
		part, arrive = vulkan.W(op.part), vulkan.W(op.arrive)
	}
	var k *vulkan.Kernel
	vc := vulkan.R(op.vc)
	groupsY := uint32(op.tokens)
	if op.ordered {
		form := uint32(1)
		if op.tokenLanes {
			form = 2
			groupsY = (groupsY + sg - 1) / sg
		}
		k, err = d.kernel("attention", 5*4, sg, uint32(op.hd), uint32(g), kvf32, form, sg, capOn, 0, sink, sg, 1)
	} else {
		split := uint32(0)
		if op.splits > 0 {
			split = uint32(op.gran)
		}
		qt := uint32(max(op.qtile, 1))
		if op.splits > 0 {
			qt = 1 // a decode step's: the splits cut one token's span
		}
		groupsY = (groupsY + qt - 1) / qt
		k, err = d.kernel("attention", 5*4, uint32(op.lanes), uint32(op.hd), uint32(g), kvf32, 0, sg, capOn, split, sink, sg, qt)
		vc.Format = fmtU32 // the GPU form reads a value row a word per lane
	}
	if err != nil {
		return fmt.Errorf("attention kernel: %w", err)
	}
	push := []uint32{uint32(op.qstride), uint32(op.slots), math.Float32bits(op.scale), math.Float32bits(op.cap), uint32(op.window)}
	z := uint32(max(op.splits, 1))
	return r.Dispatch(op.label, k, []vulkan.Arg{vulkan.R(op.q), vulkan.R(op.kc), vc, vulkan.W(op.out), vulkan.R(op.step), vulkan.R(sinks), part, arrive}, push,
		uint32(op.kvHeads), groupsY, z)
}
