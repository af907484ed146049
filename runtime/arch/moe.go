package arch

import (
	"fmt"
	"math"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// Gating is how a mixture-of-experts router turns its logits over all
// experts into the k experts a token goes to and their weights
// (llama.cpp's build_moe_ffn, llama-graph.cpp).
type Gating uint8

const (
	// GatingNone: the architecture has no experts; its FFN is dense.
	GatingNone Gating = iota
	// GatingSoftmaxTopKNorm (qwen3moe): softmax over all experts, the k
	// most probable, their probabilities divided by their sum.
	GatingSoftmaxTopKNorm
	// GatingTopKSoftmax (gpt-oss): the k largest raw (biased) logits,
	// then a softmax over those k.
	GatingTopKSoftmax
	// GatingSigmoid (deepseek2 with expert_gating_func 2, nemotron_h_moe): σ of each
	// logit; the k best by σ + a selection bias (MoEConfig's rule), each
	// weighted by its unbiased σ.
	GatingSigmoid
	// GatingSoftmax (deepseek2 with expert_gating_func 1): softmax over
	// all experts, then as GatingSigmoid.
	GatingSoftmax
)

func (g Gating) String() string {
	switch g {
	case GatingSoftmaxTopKNorm:
		return "softmax → top-k → renormalize"
	case GatingTopKSoftmax:
		return "top-k → softmax over the k"
	case GatingSigmoid:
		return "sigmoid → top-k"
	case GatingSoftmax:
		return "softmax → top-k"
	}
	return "dense"
}

// MoEConfig is a mixture-of-experts FFN resolved for one model: every
// layer's FFN routes each token to ExpertsUsed of Experts experts, each a
// SiLU-gated FFN of ExpertFF, and sums their outputs by the router's
// weights.
type MoEConfig struct {
	Gating      Gating
	Experts     int // expert_count
	ExpertsUsed int // expert_used_count: k
	ExpertFF    int // expert_feed_forward_length
	SharedFF    int // expert_shared_feed_forward_length (0: ExpertFF), for a SharedExpert declaration
	// The rest of the rule of GatingSigmoid and GatingSoftmax (Rule.Route):
	// Norm divides the chosen weights by their sum, Scale multiplies
	// them (0: not), and with Groups > 1 only the GroupsUsed groups of
	// experts with the best top-2 sums are chosen from.
	Norm               bool
	Scale              float32
	Groups, GroupsUsed int
}

// Rule is the routing rule of a MoEConfig.
func (m MoEConfig) Rule() Rule {
	return Rule{Gating: m.Gating, Norm: m.Norm, Scale: m.Scale, Groups: m.Groups, GroupsUsed: m.GroupsUsed}
}

// Rule is a whole routing rule: the gating and, for GatingSigmoid and
// GatingSoftmax, what follows it.
type Rule struct {
	Gating             Gating
	Norm               bool
	Scale              float32
	Groups, GroupsUsed int
}

// String names the rule's steps beyond the gating's.
func (r Rule) String() string {
	s := r.Gating.String()
	if r.Gating != GatingSigmoid && r.Gating != GatingSoftmax {
		return s
	}
	if r.Groups > 1 {
		s += fmt.Sprintf(" within the best %d of %d groups (top-2 sums)", r.GroupsUsed, r.Groups)
	}
	if r.Norm {
		s += " → renormalize"
	}
	if r.Scale != 0 && r.Scale != 1 {
		s += fmt.Sprintf(" → × %g", r.Scale)
	}
	return s
}

// Experts is one layer's routed experts: the router ffn_gate_inp and the
// expert banks, each a 3-D tensor stored as one matrix whose rows run
// expert by expert (Gate and Up: ExpertFF rows per expert, Down: Embd rows
// per expert), so an expert is a run of rows of an ordinary matrix and
// selecting one costs nothing.
type Experts struct {
	Router     Weight  // [embd x experts]
	RouterBias *Weight // [experts], optional (gpt-oss)
	Gate, Up   Weight  // [embd x experts*expert_ff]
	Down       Weight  // [expert_ff x experts*embd]
	// Per-expert biases (gpt-oss), F32 with one row per expert: Gate and
	// Up [expert_ff x experts], Down [embd x experts]; nil when absent.
	GateBias, UpBias, DownBias *Weight
	// Shared is the expert every token runs (qwen35moe); nil when absent.
	Shared *SharedExpert
	// SelectBias (exp_probs_b) is added to the gate's probabilities to
	// choose the experts only, not to weigh them (deepseek2); nil without.
	SelectBias *Weight
	// FusedGateUp: Gate holds each expert's gate rows followed by its up
	// rows (ffn_gate_up_exps, 2·expert_ff rows per expert) and Up is
	// empty.
	FusedGateUp bool
	// Experts beside a dense FFN (Arch.ExpertsBesideDense), else nil:
	// RouterScale [embd] multiplies the router's input (ffn_gate_inp.scale),
	// DownScale [experts] each expert's output before its routing weight
	// (ffn_down_exps.scale), PreNorm and PostNorm are the expert branch's
	// own norms (pre_ffw_norm_2, post_ffw_norm_2).
	RouterScale, DownScale *Weight
	PreNorm, PostNorm      *Weight
}

// Expert returns expert e's gate, up and down matrices: runs of rows of
// the banks, sharing their memory.
// An ungated bank (ReLU² experts) has no gate: gate is the zero Weight.
func (x *Experts) Expert(e int) (gate, up, down Weight) {
	embd := x.Down.Rows / x.count()
	if x.FusedGateUp {
		ff := x.Gate.Rows / x.count() / 2
		return rowRun(x.Gate, 2*e*ff, ff), rowRun(x.Gate, (2*e+1)*ff, ff), rowRun(x.Down, e*embd, embd)
	}
	ff := x.Up.Rows / x.count()
	if x.Gate.Data != nil {
		gate = rowRun(x.Gate, e*ff, ff)
	}
	return gate, rowRun(x.Up, e*ff, ff), rowRun(x.Down, e*embd, embd)
}

func (x *Experts) count() int { return x.Router.Rows }

// rowRun is rows [from, from+n) of m, a slice of its data (rows are
// contiguous in every type).
func rowRun(m Weight, from, n int) Weight {
	rb, _ := m.Type.RowBytes(uint64(m.Cols))
	return Weight{Name: m.Name, Type: m.Type, Cols: m.Cols, Rows: n, Data: m.Data[uint64(from)*rb : uint64(from+n)*rb]}
}

// maxGroups bounds expert_group_count (DeepSeek-V3 has 8), so that a
// token's group scores live on the stack.
const maxGroups = 64

// maxExperts bounds expert_count: real models have up to 512 (Qwen3.5);
// far past that a file is not a model we can run, and per-layer routing
// buffers are sized by it.
const maxExperts = 4096

// loadMoE reads the expert keys of an architecture that declares gating;
// one that does not refuses a file with experts, naming the key.
func loadMoE(l *loader, a Arch, c *Config) error {
	bad := func(key, msg string) error {
		return &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", l.key(key)), Msg: msg}
	}
	n := l.uint("expert_count", 0, false)
	if l.err != nil {
		return l.err
	}
	if n == 0 && a.ExpertsBesideDense {
		return nil // a dense file of an architecture whose experts are optional
	}
	if a.Gating == GatingNone || (a.MoEOptional && n == 0) {
		if n > 0 {
			return bad("expert_count", fmt.Sprintf("%d experts: %s as vkchat runs it has a dense FFN (mixture-of-experts architectures: %s)", n, a.Name, moeArchs()))
		}
		return nil
	}
	m := MoEConfig{Gating: a.Gating, Experts: n}
	m.ExpertsUsed = l.uint("expert_used_count", 0, true)
	if a.ExpertFFIsFF {
		m.ExpertFF = c.FF
	} else {
		m.ExpertFF = l.uint("expert_feed_forward_length", 0, true)
	}
	if a.SharedExpert {
		m.SharedFF = l.uint("expert_shared_feed_forward_length", 0, false)
	}
	if l.err != nil {
		return l.err
	}
	switch {
	case n == 0:
		return bad("expert_count", "missing or 0: "+a.Name+" routes every layer's FFN to experts")
	case n > maxExperts:
		return bad("expert_count", fmt.Sprintf("%d experts is implausibly many (at most %d)", n, maxExperts))
	case m.ExpertsUsed == 0 || m.ExpertsUsed > n:
		return bad("expert_used_count", fmt.Sprintf("%d must be between 1 and expert_count %d", m.ExpertsUsed, n))
	case m.ExpertFF == 0:
		return bad("expert_feed_forward_length", "must be positive")
	}
	c.MoE = m
	return nil
}

// moeArchs names the architectures that declare gating.
func moeArchs() string {
	s := ""
	for _, name := range Supported() {
		if a, _ := Lookup(name); a.Gating != GatingNone {
			if s != "" {
				s += ", "
			}
			s += name
		}
	}
	if s == "" {
		return "none yet"
	}
	return s
}

// experts locates one layer's router and expert banks.
func (w *weights) experts(p string, cfg *Config) *Experts {
	m := &cfg.MoE
	x := &Experts{Router: w.matrix(p+"ffn_gate_inp.weight", cfg.Embd, m.Experts)}
	if _, ok := w.f.Tensor(p + "ffn_gate_inp.bias"); ok {
		b := w.vector(p+"ffn_gate_inp.bias", m.Experts)
		x.RouterBias = &b
	}
	if _, ok := w.f.Tensor(p + "exp_probs_b.bias"); ok {
		b := w.vector(p+"exp_probs_b.bias", m.Experts)
		x.SelectBias = &b
	}
	if _, ok := w.f.Tensor(p + "ffn_gate_up_exps.weight"); ok {
		// llama.cpp's fused bank: per expert, the gate rows then the up rows
		x.Gate, x.FusedGateUp = w.bank(p+"ffn_gate_up_exps.weight", cfg.Embd, 2*m.ExpertFF, m.Experts), true
	} else {
		if cfg.Block.Act.Gated() {
			x.Gate = w.bank(p+"ffn_gate_exps.weight", cfg.Embd, m.ExpertFF, m.Experts)
		}
		x.Up = w.bank(p+"ffn_up_exps.weight", cfg.Embd, m.ExpertFF, m.Experts)
	}
	x.Down = w.bank(p+"ffn_down_exps.weight", m.ExpertFF, cfg.Embd, m.Experts)
	for _, b := range []struct {
		name string
		n    int
		dst  **Weight
	}{{"ffn_gate_exps.bias", m.ExpertFF, &x.GateBias}, {"ffn_up_exps.bias", m.ExpertFF, &x.UpBias}, {"ffn_down_exps.bias", cfg.Embd, &x.DownBias}} {
		if _, ok := w.f.Tensor(p + b.name); ok {
			v := w.f32Matrix(p+b.name, b.n, m.Experts)
			*b.dst = &v
		}
	}
	return x
}

// f32Matrix is an F32 matrix of biases or other per-row vectors.
func (w *weights) f32Matrix(name string, cols, rows int) Weight {
	m := w.matrix(name, cols, rows)
	if w.err == nil && m.Type != ggml.F32 {
		w.err = tensorErr(w.f, name, fmt.Sprintf("must be F32, found %s", m.Type))
	}
	return m
}

// bank is a 3-D expert tensor {cols, rows, experts} as one matrix of
// rows×experts rows.
func (w *weights) bank(name string, cols, rows, experts int) Weight {
	if w.err != nil {
		return Weight{}
	}
	t, ok := w.f.Tensor(name)
	if !ok {
		w.err = tensorErr(w.f, name, "missing")
		return Weight{}
	}
	if want := []uint64{uint64(cols), uint64(rows), uint64(experts)}; !sameDims(t.Dims, want) {
		w.err = tensorErr(w.f, name, fmt.Sprintf("shape %v, expected %v", t.Dims, want))
		return Weight{}
	}
	if !t.Type.Supported() {
		w.err = tensorErr(w.f, name, fmt.Sprintf("type %s is not supported", t.Type))
		return Weight{}
	}
	w.use(name)
	return Weight{Name: name, Type: t.Type, Cols: cols, Rows: rows * experts, Data: w.f.TensorData(t)}
}

// inactive is the fraction of each expert bank a token does not read.
func (m *Model) inactive(n int64) int64 {
	return n * int64(m.MoE.Experts-m.MoE.ExpertsUsed) / int64(m.MoE.Experts)
}

// ExpertBytes is the size of all expert banks (0 for a dense model).
func (m *Model) ExpertBytes() int64 {
	var n int64
	for i := range m.Layers {
		if x := m.Layers[i].Experts; x != nil {
			n += int64(len(x.Gate.Data)) + int64(len(x.Up.Data)) + int64(len(x.Down.Data))
		}
	}
	return n
}

// ActiveWeightBytes is what one token reads of the weights: all of them
// but the experts it is not routed to. It equals WeightBytes for a dense
// model. (Every bank holds its experts in equal runs, so the total's
// share is exactly the sum of the layers'.)
func (m *Model) ActiveWeightBytes() int64 {
	if m.MoE.Experts == 0 {
		return m.WeightBytes()
	}
	return m.WeightBytes() - m.inactive(m.ExpertBytes())
}

// ActiveParams is the parameters one token uses: Params less the experts
// it is not routed to.
func (m *Model) ActiveParams() int64 {
	n := m.Params()
	for i := range m.Layers {
		if x := m.Layers[i].Experts; x != nil {
			n -= m.inactive(int64(x.Gate.Rows*x.Gate.Cols + x.Up.Rows*x.Up.Cols + x.Down.Rows*x.Down.Cols))
		}
	}
	return n
}

// RoutingRule is the routing in a line, for the router panel: the gating
// rule, and where experts run beside a dense FFN (gemma4) what the router
// reads and that each expert's output is scaled by its own factor after
// its routing weight; "" for a dense model.
func (m *Model) RoutingRule() string {
	if m.MoE.Experts == 0 {
		return ""
	}
	s := m.MoE.Rule().String()
	for i := range m.Layers {
		x := m.Layers[i].Experts
		if x == nil {
			continue
		}
		if x.SelectBias != nil {
			s += " · chosen with a bias, weighed without"
		}
		if x.RouterScale != nil {
			s += fmt.Sprintf(" · router reads rms(x)/√%d ⊙ its scale", m.Embd)
		}
		if x.DownScale != nil {
			s += " · outputs × a per-expert scale"
		}
		if x.Shared != nil {
			s += " · + a shared expert"
		}
		if m.Layers[i].PostDenseNorm != nil {
			s += " · beside a dense FFN"
		}
		break
	}
	return s
}

// ActiveFormula says in one line how ActiveWeightBytes adds up: the
// experts a token reads per layer, and everything else.
func (m *Model) ActiveFormula() string {
	bank := m.ExpertBytes()
	if bank == 0 {
		return ""
	}
	e := m.MoE
	layers, rest := 0, "attention, norms, router and embeddings"
	for i := range m.Layers {
		if m.Layers[i].Experts != nil {
			layers++
		}
		if m.Layers[i].Gate.Data != nil {
			// a dense lead (deepseek2) or a dense FFN beside the experts
			// (gemma4) is read by every token too
			rest = "attention, dense FFNs, norms, routers and embeddings"
		}
	}
	perExpert := bank / int64(e.Experts) / int64(layers)
	return fmt.Sprintf("%d layers × %d of %d experts × %d B + %d B of %s = %d B",
		layers, e.ExpertsUsed, e.Experts, perExpert, m.WeightBytes()-bank, rest, m.ActiveWeightBytes())
}

// Route is the gating rule itself, for one token, in llama.cpp's float
// order (build_moe_ffn): it picks the len(sel) experts from the router
// logits (overwritten) into sel, most weight first, and their weights into
// wts; order is scratch of len(logits). The CPU backend routes with it and
// the Vulkan route kernel is tested against it.
func (g Gating) Route(logits []float32, order, sel []int32, wts []float32) {
	if g == GatingSoftmaxTopKNorm {
		softmax(logits)
	}
	// ggml_argsort_top_k: the k largest, largest first (ties: lower id),
	// by selection: k passes over the experts cost less than sorting them
	// all, once per token and layer. order marks the ones taken.
	clear(order)
	for j := range sel {
		best := -1
		for i, v := range logits {
			if order[i] == 0 && (best < 0 || v > logits[best]) {
				best = i
			}
		}
		order[best] = 1
		sel[j] = int32(best)
	}
	for j, id := range sel {
		wts[j] = logits[id]
	}
	switch g {
	case GatingSoftmaxTopKNorm:
		// The weights divided by their sum, clamped as llama.cpp clamps
		// it so that k vanishing probabilities cannot divide by zero.
		var sum float64
		for _, w := range wts {
			sum += float64(w)
		}
		d := float32(max(sum, 6.103515625e-5))
		for j := range wts {
			wts[j] /= d
		}
	case GatingTopKSoftmax:
		softmax(wts)
	}
}

// softmax is ggml's soft_max on one row: exponentials of x - max rounded
// to float32, summed in float64, then scaled by the rounded reciprocal.
func softmax(x []float32) {
	mx := float32(math.Inf(-1))
	for _, v := range x {
		mx = max(mx, v)
	}
	var sum float64
	for i, v := range x {
		x[i] = float32(math.Exp(float64(v - mx)))
		sum += float64(x[i])
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
}

// Route is the rule for one token in llama.cpp's float order
// (build_moe_ffn, llama-graph.cpp): the gate's probabilities (logits is
// overwritten with them), the selection scores probs + bias (bias nil:
// none) in scores, masked to the best groups, the top k into sel (most
// first, ties to the lower id), their unbiased probabilities into wts,
// renormalised and scaled. order is scratch of len(logits). Gatings
// other than GatingSigmoid and GatingSoftmax route as Gating.Route does.
func (r Rule) Route(logits, bias, scores []float32, order, sel []int32, wts []float32) {
	if r.Gating != GatingSigmoid && r.Gating != GatingSoftmax {
		r.Gating.Route(logits, order, sel, wts)
		return
	}
	if r.Gating == GatingSoftmax {
		softmax(logits)
	} else {
		for i, x := range logits {
			// ggml_vec_sigmoid_f32: 1/(1+expf(-x)) in float32
			logits[i] = 1 / (1 + float32(math.Exp(float64(-x))))
		}
	}
	copy(scores, logits)
	if bias != nil {
		for i := range scores {
			scores[i] += bias[i]
		}
	}
	if r.Groups > 1 {
		maskGroups(scores, r.Groups, r.GroupsUsed, order)
	}
	topK(scores, order, sel)
	for j, id := range sel {
		wts[j] = logits[id]
	}
	if r.Norm {
		var sum float64
		for _, w := range wts {
			sum += float64(w)
		}
		d := float32(max(sum, 6.103515625e-5))
		for j := range wts {
			wts[j] /= d
		}
	}
	if r.Scale != 0 && r.Scale != 1 {
		for j := range wts {
			wts[j] *= r.Scale
		}
	}
}

// maskGroups sets the scores of all but the used best groups to −Inf: a
// group's score is the sum of its two best (DeepSeek-V3's rule, which
// llama.cpp applies whatever the model).
func maskGroups(scores []float32, groups, used int, order []int32) {
	per := len(scores) / groups
	var gsBuf [maxGroups]float32
	var keepBuf [maxGroups]int32
	gs, keep := gsBuf[:groups], keepBuf[:used]
	var two [2]int32
	for g := range gs {
		topK(scores[g*per:(g+1)*per], order[:per], two[:])
		gs[g] = float32(float64(scores[g*per+int(two[0])]) + float64(scores[g*per+int(two[1])]))
	}
	topK(gs, order[:groups], keep)
	clear(order[:groups])
	for _, g := range keep {
		order[g] = 1
	}
	inf := float32(math.Inf(-1))
	for g := 0; g < groups; g++ {
		if order[g] == 0 {
			for i := g * per; i < (g+1)*per; i++ {
				scores[i] = inf
			}
		}
	}
}

// topK is ggml_argsort_top_k: the len(sel) largest of v, largest first
// (ties: lower index), by selection; order is scratch of len(v).
func topK(v []float32, order, sel []int32) {
	clear(order[:len(v)])
	for j := range sel {
		best := -1
		for i, x := range v {
			if order[i] == 0 && (best < 0 || x > v[best]) {
				best = i
			}
		}
		order[best] = 1
		sel[j] = int32(best)
	}
}
