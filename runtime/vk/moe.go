package vk

import (
	"encoding/binary"
	"fmt"
	"math"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"

	"vkchat/runtime/vk/vulkan"
)

// A mixture-of-experts FFN (a plan.MoE op) as dispatches, per layer:
//
//	matvec   x → router logits   RMSNorm(ffn_norm) fused, the router's bias as epilogue
//	route    logits → ids, wts   moe_route.comp: the gating, k experts per token
//	matvec   x → h per pair      gate and up banks paired, norm fused, rows of the pair's expert (MOE 1), its biases (BIAS)
//	matvec   h → y per pair      the down bank, rows of the pair's expert (MOE 2), its bias (BIAS)
//	combine  x += Σ w·y          moe_combine.comp, slot order (or → o and the branch end)
//
// Experts beside a dense FFN (gemma4) read as much from the plan's MoE
// op: the router's own norm of the stream (its weight × its scale, folded
// into the router's mat-vec as a branch norm), the fused gate|up bank split
// into the two banks at upload, each expert's output scale in the combine
// (SCALE, before the routing weight), and the sum, stored apart, normed
// and added to o by residual.comp (ADD), where the dense branch's output
// is already normed in place by the same kernel (ADD 0).
//
// The routing never leaves the device: the expert products read the ids
// the route kernel wrote. The mat-vecs above take one (token, slot) pair
// per pass, so a dequantized weight serves one pair and an expert chosen
// by several tokens streams its rows once for each. That is what a decode
// step needs (k experts' rows for its token), not a prefill batch: there,
// where the tuning takes the grouped product (tuning.moeGrouped, quantized
// banks, as the dense prefill takes the tiled one), the pairs are grouped
// by expert on the device, as the CPU backend and llama.cpp's mul_mat_id
// do, and the expert mat-vecs become tiled products over each expert's
// pairs:
//
//	group    ids → G             moe_group.comp: per-expert counts, offsets and the pair list, sorted by expert in pair order
//	matmul   x → h per pair      phase 0 rounds x per token; phase 1 (MOE 1): per expert, its rows × tiles of its pairs
//	matmul   h → y per pair      phase 0 rounds h per pair; phase 1 (MOE 2) as above
//
// so an expert's weight tile is read once per tile of its pairs (4 on
// the GPU layout, 2 on the CPU one: planGrouped says why so few) instead
// of once per pair, and an expert no token chose costs a workgroup or a
// few that read its count. The pair list's order depends only on the
// routing, so the sums do too. The per-pair mat-vec stays for decode and
// float banks, and is the grouped product's oracle (TestMoEGroupedProduct,
// TestPrefillGroupsExperts). On lavapipe the bench shape's expert products
// run faster per CPU-second grouped, Q4_0 and Q4_K alike
// (BenchmarkGroupedProduct and the prefill: docs/benchmarks.md,
// "2026-12-04: MoE prefill groups the pairs by expert (issue 24)").
//
// The banks are uploaded whole, like every other weight (the device holds
// all experts; a token reads k of them), each as one part: the kernel's
// row offset is within one binding, so a bank a device would need to split
// is refused (moeRows.check).

// moeWeights are one layer's router and expert banks on the device.
type moeWeights struct {
	router         *Matrix        // [embd × experts]
	routerBias     *vulkan.Buffer // [experts], or nil
	selectBias     *vulkan.Buffer // GatingSigmoid's or GatingSoftmax's bias that only chooses [experts], or nil
	gate, up, down *Matrix        // banks: experts runs of rows each
	// per-expert biases (gpt-oss), [experts][rows] like the banks, added
	// to each product before the activation (gate, up) or the combine
	// (down); gate and up both or neither, nil without
	gateBias, upBias, downBias *vulkan.Buffer
	// gemma4's: the router's own norm weight (RouterIn's, × its scale,
	// padded to the x stride), each expert's output scale ([experts]) and
	// the post-norm of the experts' sum; nil without
	routerIn, downScale, postNorm *vulkan.Buffer
}

// moeBuffers are a mixture-of-experts model's routing and expert
// activations (activations.moe), prefillChunk tokens of k pairs each; nil
// for a dense model.
type moeBuffers struct {
	logits, ids, wts, h, h2, y *vulkan.Buffer
	// sum holds the experts' weighted sum for a post-norm (nil: no layer
	// norms it)
	sum *vulkan.Buffer
	// the prefill's pairs grouped by expert (moe_group.comp) and the
	// experts' h rounded per pair for the grouped down product
	groups, xq *vulkan.Buffer
	// log holds the last token's routing per layer, which LastRouting
	// reads into lastRoute
	log        *vulkan.Buffer
	lastRoute  []backend.Routing
	routeWords []byte // the log as read, reused
	ffStride   int    // floats per pair in h
}

// recordMoE records layer's mixture-of-experts FFN for the step's tokens
// (s.cap the batch capacity): x += Σ_slot w·expert(ffn_norm(x)), or the
// sum into o for the branch end.
func (b *Backend) recordMoE(r *vulkan.Recorder, name func(string) string, layer int, o *plan.MoE, x *moeWeights, in input, act uint32, fused bool, s bodyShape) error {
	mb := b.act.moe
	router := matvecOp{label: name("router"), m: x.router, y: mb.logits, ystride: o.Experts, tokens: s.cap, step: b.graph.step}
	b.bind(&router, in)
	if o.RouterIn != nil {
		// moeForm took only a router input of the stream
		router.x, router.xstride, router.norm, router.eps = b.act.x, b.act.xStride, x.routerIn, o.RouterIn.Eps
	}
	if x.routerBias != nil {
		router.bias, router.epi = x.routerBias, epiBias
	}
	if err := b.d.matvec(r, router); err != nil {
		return err
	}
	rule := o.Rule
	rule.Gating = o.Gating
	if err := b.d.moeRouteRule(r, name("route"), rule, x.selectBias, o.Experts, o.K, mb.logits, o.Experts, mb.ids, mb.wts,
		mb.log, 2*o.K*layer, b.graph.step, s.cap); err != nil {
		return err
	}
	rows := moeRows{ids: mb.ids, k: o.K, experts: o.Experts}
	// an expert's rows sum as the CPU backend's (llama.cpp's MUL_MAT_ID)
	ffn := matvecOp{label: name("experts gate+up"), m: x.gate, m2: x.up, y: mb.h, y2: mb.h2, ystride: mb.ffStride, tokens: s.cap, step: b.graph.step, act: act, moe: rows,
		rbias: x.gateBias, rbias2: x.upBias, xq: b.act.xq, rowByRow: true}
	b.bind(&ffn, in)
	ffns := []matvecOp{ffn}
	if x.gate == nil {
		// ungated experts: relu(up·x)², the square after the products
		ffn.label, ffn.m, ffn.m2, ffn.y2, ffn.rbias, ffn.rbias2 = name("experts up"), x.up, nil, nil, x.upBias, nil
		ffns = []matvecOp{ffn}
	} else if x.gate.Type != x.up.Type {
		gate := ffn
		gate.label, gate.m2, gate.rbias2 = name("experts gate"), nil, nil
		upOp := ffn
		upOp.label, upOp.m, upOp.m2, upOp.epi, upOp.rbias, upOp.rbias2 = name("experts up·act(gate)"), x.up, nil, epiSwiGLU, x.upBias, nil
		ffns = []matvecOp{gate, upOp}
	}
	rows.perPair = true
	down := matvecOp{label: name("experts down"), m: x.down, x: mb.h, xstride: mb.ffStride, y: mb.y, ystride: b.act.xStride, tokens: s.cap, step: b.graph.step, moe: rows, rbias: x.downBias,
		xq: mb.xq, rowByRow: true}
	ops := append(ffns, down)
	grouped := false
	for i := range ops {
		grouped = grouped || b.d.useGrouped(&ops[i])
	}
	if grouped {
		if err := b.d.moeGroup(r, name("experts group"), o.Experts, o.K, mb.ids, mb.groups, b.graph.step, s.cap); err != nil {
			return err
		}
	}
	for i, op := range ops {
		if err := b.d.expertProduct(r, op, mb.groups); err != nil {
			return err
		}
		if i == len(ffns)-1 && x.gate == nil {
			if err := b.recordReLU2(r, name("experts relu²"), mb.h, o.FF, mb.ffStride, o.K, s); err != nil {
				return err
			}
		}
	}
	out := b.act.x
	if !fused {
		out = b.act.o // the Residual op adds it
	}
	if o.PostNorm != nil {
		// the sum is normed before it is stored in o or added to it
		if mb.sum == nil {
			return fmt.Errorf("%s: no buffer for the experts' sum", name("experts combine"))
		}
		if err := b.d.moeCombine(r, name("experts combine"), o.K, b.plan.Embd, mb.y, b.act.xStride, mb.wts, mb.ids, x.downScale, mb.sum, b.act.xStride, false, b.graph.step, s.cap); err != nil {
			return err
		}
		return b.recordNormInto(r, name("experts post-norm"), mb.sum, x.postNorm, out, o.Eps, 1, o.Add, s)
	}
	return b.d.moeCombine(r, name("experts combine"), o.K, b.plan.Embd, mb.y, b.act.xStride, mb.wts, mb.ids, x.downScale, out, b.act.xStride, fused || o.Add, b.graph.step, s.cap)
}

// allocateMoE creates the routing and expert activation buffers
// (prefillChunk tokens, k pairs each) of a mixture-of-experts model.
func (b *Backend) allocateMoE(act func(string, int, vulkan.MemKind) (*vulkan.Buffer, error)) error {
	mc := b.plan.MoEShape
	if mc.Experts == 0 {
		return nil
	}
	n, k := prefillChunk, mc.ExpertsUsed
	mb := &moeBuffers{ffStride: int(alignUp(uint64(mc.ExpertFF), 256))}
	b.act.moe = mb
	var err error
	for _, a := range []struct {
		dst    **vulkan.Buffer
		name   string
		floats int
	}{
		{&mb.logits, "router logits", n * mc.Experts},
		{&mb.ids, "expert ids", n * k},
		{&mb.wts, "expert weights", n * k},
		{&mb.h, "activations experts ffn", n * k * mb.ffStride},
		{&mb.h2, "activations experts ffn partial sums", n * k * mb.ffStride},
		{&mb.y, "activations experts out", n * k * b.act.xStride},
		{&mb.groups, "expert pairs grouped by expert", 2*mc.Experts + n*k},
		{&mb.xq, "activations experts ffn rounded for the grouped product", n * k * xqBound(mb.ffStride)},
	} {
		if *a.dst, err = act(a.name, a.floats, vulkan.MemDevice); err != nil {
			return err
		}
	}
	post := false
	forOps(b.plan, func(_ int, op plan.Op) {
		if o, ok := op.(plan.MoE); ok && o.PostNorm != nil {
			post = true
		}
	})
	if post {
		if mb.sum, err = act("activations experts sum", n*b.act.xStride, vulkan.MemDevice); err != nil {
			return err
		}
	}
	// read by the host after every step: host-visible
	if mb.log, err = act("routing of the last token", 2*k*len(b.plan.Layers), vulkan.MemHost); err != nil {
		return err
	}
	mb.routeWords = make([]byte, 4*2*k*len(b.plan.Layers))
	// a layer without experts (a dense lead, a recurrent layer's)
	// reports a zero Routing, as the CPU backend's, not expert 0 at
	// weight 0 from a log slot nothing writes
	mb.lastRoute = make([]backend.Routing, len(b.plan.Layers))
	for i, l := range b.plan.Layers {
		for _, op := range l.Ops {
			if _, ok := op.(plan.MoE); ok {
				mb.lastRoute[i] = backend.Routing{Experts: make([]int32, k), Weights: make([]float32, k)}
			}
		}
	}
	return nil
}

// useGrouped reports whether op, an expert product of the step, is
// recorded as the grouped tiled product (matmul.comp's MOE) rather than
// the per-pair mat-vec: a batch, banks of quantized types (as the dense
// prefill takes the tiled product only for them: float weights keep the
// mat-vec's summation order, which the references' bounds were measured
// with), a scratch buffer for the rounded x, on a layout that takes it,
// and not for banks that round as the CPU backend's (useExact).
func (d *gpu) useGrouped(op *matvecOp) bool {
	return d.tune.moeGrouped && op.moe.ids != nil && op.tokens > 1 && !op.last && op.xq != nil &&
		op.m.Type.Quantized() && (op.m2 == nil || op.m2.Type.Quantized()) && !d.useExact(op)
}

// expertProduct records the expert product op: grouped over the pair list
// groups (moeGroup's output) where useGrouped takes it, else the per-pair
// mat-vec (the exact kernel's where the bank rounds as the CPU backend's:
// d.matvec takes it).
func (d *gpu) expertProduct(r *vulkan.Recorder, op matvecOp, groups *vulkan.Buffer) error {
	if d.useGrouped(&op) {
		return d.matmulOn(r, op, groups)
	}
	return d.matvec(r, op)
}

// moeGroupWorkgroup is the group kernel's one workgroup: a lane per
// expert (128 in the largest models here take two trips).
const moeGroupWorkgroup = 64

// moeGroup records the group kernel: the step's (token, slot) pairs
// (tokens: the batch capacity, k per token, ids the route kernel's) grouped
// by expert into groups: 2·experts + tokens·k words, as moe_group.comp
// lays them out.
func (d *gpu) moeGroup(r *vulkan.Recorder, label string, experts, k int, ids, groups, step *vulkan.Buffer, tokens int) error {
	pairs := tokens * k
	if need := uint64(4 * (2*experts + pairs)); groups == nil || groups.Size < need {
		return fmt.Errorf("%s: %d experts' counts and %d pairs need a %d-byte buffer", label, experts, pairs, need)
	}
	if need, lim := uint64(4*(pairs+experts)), uint64(d.Info.Limits.MaxSharedMemory); need > lim {
		return fmt.Errorf("%s: %d pairs' ids and %d experts' counts need %d bytes of shared memory, over the device's %d: %w", label, pairs, experts, need, lim, backend.ErrUnsupported)
	}
	kern, err := d.kernel("moe_group", 0, moeGroupWorkgroup, uint32(experts), uint32(k), uint32(pairs))
	if err != nil {
		return err
	}
	return r.Dispatch(label, kern, []vulkan.Arg{{B: ids, Format: fmtU32}, vulkan.W(groups), vulkan.R(step)}, nil, 1, 1, 1)
}

// moeRoute records the route kernel over the router logits (lstride floats
// per token) of the step's tokens (tokens: the batch capacity), writing k
// expert ids and weights per token.
// The step's last token's ids and weights also go to log at logoff
// (uint32 words: k ids, then k weights' bits), for LastRouting.
func (d *gpu) moeRoute(r *vulkan.Recorder, label string, g plan.Gating, experts, k int, logits *vulkan.Buffer, lstride int, ids, wts, log *vulkan.Buffer, logoff int, step *vulkan.Buffer, tokens int) error {
	return d.moeRouteRule(r, label, plan.RouteRule{Gating: g}, nil, experts, k, logits, lstride, ids, wts, log, logoff, step, tokens)
}

// moeRouteRule is moeRoute under a whole rule: GatingSigmoid's and
// GatingSoftmax's selection bias (nil: none), groups, renormalisation and
// scale besides the gating.
func (d *gpu) moeRouteRule(r *vulkan.Recorder, label string, rule plan.RouteRule, bias *vulkan.Buffer, experts, k int, logits *vulkan.Buffer, lstride int, ids, wts, log *vulkan.Buffer, logoff int, step *vulkan.Buffer, tokens int) error {
	var gating uint32
	switch g := rule.Gating; {
	case g == plan.GatingSoftmaxTopKNorm:
		gating = 1
	case g == plan.GatingTopKSoftmax:
		gating = 2
	case g == plan.GatingSigmoid:
		gating = 3
	case g == plan.GatingSoftmax:
		gating = 4
	default:
		return fmt.Errorf("%s: gating %s has no route kernel", label, rule)
	}
	biased := bias != nil
	if !biased {
		var err error
		if bias, err = d.dummy(); err != nil {
			return err
		}
	}
	if k < 1 || k > experts {
		return fmt.Errorf("%s: %d of %d experts per token", label, k, experts)
	}
	if lim := d.Info.Limits.MaxSharedMemory; uint64(8*experts) > uint64(lim) {
		return fmt.Errorf("%s: %d experts' probabilities need %d bytes of shared memory, over the device's %d: %w", label, experts, 8*experts, lim, backend.ErrUnsupported)
	}
	if rule.Groups > 1 && (experts%rule.Groups != 0 || experts/rule.Groups < 2 || rule.GroupsUsed < 1 || rule.GroupsUsed > rule.Groups) {
		return fmt.Errorf("%s: %d of %d groups of %d experts", label, rule.GroupsUsed, rule.Groups, experts)
	}
	kern, err := d.kernel("moe_route", 7*4, 1, uint32(experts), uint32(k), gating)
	if err != nil {
		return err
	}
	scale := rule.Scale
	if scale == 1 {
		scale = 0
	}
	return r.Dispatch(label, kern, []vulkan.Arg{{B: logits, Format: fmtU32}, vulkan.W(ids), vulkan.W(wts), vulkan.R(step), vulkan.W(log), {B: bias, Format: fmtU32}},
		[]uint32{uint32(lstride), uint32(logoff), flag(rule.Norm), math.Float32bits(scale), uint32(max(rule.Groups, 0)), uint32(max(rule.GroupsUsed, 0)), flag(biased)}, uint32(tokens), 1, 1)
}

// moeCombine records the combine kernel: for each of the step's tokens the
// k experts' outputs (ystride floats per pair), each × its expert's scale
// where scales is not nil (ids the pairs' experts), weighted and summed,
// added to x (residual) or stored there, n values per token.
func (d *gpu) moeCombine(r *vulkan.Recorder, label string, k, n int, ys *vulkan.Buffer, ystride int, wts, ids, scales, x *vulkan.Buffer, xstride int, residual bool, step *vulkan.Buffer, tokens int) error {
	const wg = 64
	kern, err := d.kernel("moe_combine", 3*4, wg, uint32(k), flag(residual), flag(scales != nil))
	if err != nil {
		return err
	}
	if scales == nil {
		if scales, err = d.dummy(); err != nil {
			return err
		}
		ids = scales
	}
	out := vulkan.W(x)
	return r.Dispatch(label, kern, []vulkan.Arg{{B: ys, Format: fmtU32}, {B: wts, Format: fmtU32}, out, vulkan.R(step), {B: x, Format: fmtU32},
		{B: ids, Format: fmtU32}, {B: scales, Format: fmtU32}},
		[]uint32{uint32(n), uint32(xstride), uint32(ystride)}, uint32(tokens), 1, 1)
}

// LastRouting implements backend.RoutingBackend: the routing the route
// kernels logged for the last token of the last step (the log is
// host-visible, so this is a copy, not a submission); nil for a dense
// model.
func (b *Backend) LastRouting() []backend.Routing {
	return b.act.moe.lastRouting(b.plan.MoEShape.ExpertsUsed)
}

// lastRouting reads the routing log of k experts per token into lastRoute;
// nil for a dense model (no buffers).
func (mb *moeBuffers) lastRouting(k int) []backend.Routing {
	if mb == nil || mb.log == nil {
		return nil
	}
	words := mb.routeWords
	if err := mb.log.Read(0, words); err != nil {
		return nil
	}
	for l := range mb.lastRoute {
		if mb.lastRoute[l].Experts == nil {
			continue
		}
		w := words[4*2*k*l:]
		for j := 0; j < k; j++ {
			mb.lastRoute[l].Experts[j] = int32(binary.LittleEndian.Uint32(w[4*j:]))
			mb.lastRoute[l].Weights[j] = math.Float32frombits(binary.LittleEndian.Uint32(w[4*(k+j):]))
		}
	}
	return mb.lastRoute
}
