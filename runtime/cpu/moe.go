package cpu

import (
	"vkchat/runtime/backend"
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
)

// moeScratch holds a batch's routing and the experts' activations; nil
// for dense models.
type moeScratch struct {
	logits []float32 // router logits, then probabilities [n x experts]
	sel    []int32   // chosen experts, most probable first [n x k]
	wts    []float32 // their weights [n x k]
	xs     []float32 // the inputs of the tokens routed to one expert [n x embd]
	g, u   []float32 // that expert's gate and up [n x expert_ff]
	d      []float32 // its down projection [n x embd]
	ys     []float32 // every (token, slot) output [n x k x embd]
	rows   []int32   // the (token, slot) pairs routed to the expert at hand
	order  []int32   // argsort scratch [experts]
	scores []float32 // one token's selection scores [experts]
	// the shared expert's gate and up [n x shared_ff], its gate logit
	// [n] and output [n x embd]; nil without one
	shG, shU, shLogit, shD []float32
	last                   []backend.Routing // per layer, the last token's (LastRouting)
	// one token's products as grouped calls (moeToken), made once
	mats       []quant.Matrix
	dsts, srcs [][]float32
	// resident holds each expert's matrices (per layer and expert) bound
	// to their packed copies once they are made, where the budget holds
	// every expert's data so that none should be evicted (else it is
	// dropped at the first eviction): a token then finds its
	// experts' matrices by index, not through the pack cache's lock and
	// map (12 matrices a layer, each a few cache misses the weight stream
	// has caused). nil when the budget is smaller.
	resident []residentExpert
}

type residentExpert struct {
	m  [3]quant.Matrix // gate, up, down
	ok bool
}

func newMoEScratch(p *plan.Plan, n int) *moeScratch {
	m := &p.MoEShape
	if m.Experts == 0 {
		return nil
	}
	k, e, ff := m.ExpertsUsed, p.Embd, m.ExpertFF
	s := &moeScratch{
		logits: make([]float32, n*m.Experts), sel: make([]int32, n*k), wts: make([]float32, n*k),
		xs: make([]float32, n*e), g: make([]float32, n*ff), u: make([]float32, n*ff), d: make([]float32, n*e),
		ys: make([]float32, n*k*e), rows: make([]int32, 0, n), order: make([]int32, m.Experts), scores: make([]float32, m.Experts),
		last: make([]backend.Routing, len(p.Layers)),
		mats: make([]quant.Matrix, 3*k), dsts: make([][]float32, 3*k), srcs: make([][]float32, k),
	}
	sharedFF := 0
	for i, layer := range p.Layers {
		for _, op := range layer.Ops {
			switch o := op.(type) {
			case plan.MoE:
				// a layer without experts (a dense lead, a recurrent
				// layer's) reports none rather than expert 0 at weight 0
				s.last[i] = backend.Routing{Experts: make([]int32, k), Weights: make([]float32, k)}
			case plan.SharedExpert:
				sharedFF = max(sharedFF, o.Up.Rows)
			}
		}
	}
	if sharedFF > 0 {
		s.shG, s.shU, s.shLogit, s.shD = make([]float32, n*sharedFF), make([]float32, n*sharedFF), make([]float32, n), make([]float32, n*e)
	}
	return s
}

// LastRouting implements backend.RoutingBackend; nil for a dense model.
func (b *Backend) LastRouting() []backend.Routing {
	if b.experts == nil {
		return nil
	}
	return b.experts.last
}

func (s *moeScratch) bytes() int64 {
	if s == nil {
		return 0
	}
	return 4 * int64(len(s.logits)+len(s.sel)+len(s.wts)+len(s.xs)+len(s.g)+len(s.u)+len(s.d)+len(s.ys)+cap(s.rows)+len(s.order)+
		len(s.scores)+len(s.shG)+len(s.shU)+len(s.shLogit)+len(s.shD))
}

// moe runs a layer's mixture-of-experts FFN on the normed inputs in (n
// tokens) and writes the result to out, as llama.cpp's build_moe_ffn does:
// route every token, then run each chosen expert once over all the tokens
// routed to it (so its weights stream once per batch, and only the chosen
// experts' rows are read), then sum each token's k outputs scaled by their
// weights in slot order, whatever order the experts ran in.
//
// With RouterIn the router reads rms(from) × Scale ⊙ its weight rather
// than in; with DownScale each expert's output is × its scale before its
// weight; with PostNorm the sum is normed, and with Add it is added to out.
func (b *Backend) moe(layer int, x *plan.MoE, w *layerState, in, from, out []float32, n int) {
	s := b.experts
	E, k, e, ff := x.Experts, x.K, b.plan.Embd, x.FF
	rin := in
	if ri := x.RouterIn; ri != nil {
		// xs is free until the experts run; each step rounds to float32
		// as llama.cpp's rms_norm, scale and mul do
		rin = s.xs[:n*e]
		for i := 0; i < n; i++ {
			row := rin[i*e : (i+1)*e]
			rmsNorm(row, from[i*e:(i+1)*e], nil, ri.Eps)
			scaleAll(row, ri.Scale)
			for t := range row {
				row[t] *= w.routerScale[t]
			}
		}
	}
	quant.MatMul(s.logits[:n*E], w.router, rin, n)
	for i := 0; i < n; i++ {
		logits := s.logits[i*E : (i+1)*E]
		if w.routerBias != nil {
			addTo(logits, w.routerBias)
		}
		x.Rule.Route(logits, w.selectBias, s.scores, s.order, s.sel[i*k:(i+1)*k], s.wts[i*k:(i+1)*k])
	}
	last := &s.last[layer]
	copy(last.Experts, s.sel[(n-1)*k:n*k])
	copy(last.Weights, s.wts[(n-1)*k:n*k])
	if n == 1 {
		b.moeToken(layer, x, w, in)
		s.finish(x, w, out, 1, k, e)
		return
	}
	for ex := 0; ex < E; ex++ {
		s.rows = s.rows[:0]
		for r, id := range s.sel[:n*k] {
			if int(id) == ex {
				s.rows = append(s.rows, int32(r))
			}
		}
		m := len(s.rows)
		if m == 0 {
			continue // its rows are never read
		}
		for j, r := range s.rows {
			i := int(r) / k
			copy(s.xs[j*e:(j+1)*e], in[i*e:(i+1)*e])
		}
		gate, up, down := x.Expert(ex)
		if !x.Act.Gated() {
			// ungated (ReLU²): up's product is activated alone, where
			// the gate's would be
			em := []quant.Matrix{expertMatrix(up), expertMatrix(down)}
			b.expertPacks.Use(em...)
			quant.MatMul(s.g[:m*ff], em[0], s.xs[:m*e], m)
			addExpertBias(s.g[:m*ff], w.upBias, ex, ff)
			b.activate(x.Act, s.g[:m*ff], nil)
			quant.MatMul(s.d[:m*e], em[1], s.g[:m*ff], m)
			addExpertBias(s.d[:m*e], w.downBias, ex, e)
			if w.downScale != nil {
				scaleAll(s.d[:m*e], w.downScale[ex])
			}
			for j, r := range s.rows {
				copy(s.ys[int(r)*e:(int(r)+1)*e], s.d[j*e:(j+1)*e])
			}
			continue
		}
		em := []quant.Matrix{expertMatrix(gate), expertMatrix(up), expertMatrix(down)}
		b.expertPacks.Use(em...) // binds them, for the products below
		quant.MatMuls([][]float32{s.g[:m*ff], s.u[:m*ff]}, em[:2], s.xs[:m*e], m)
		addExpertBias(s.g[:m*ff], w.gateBias, ex, ff)
		addExpertBias(s.u[:m*ff], w.upBias, ex, ff)
		b.activate(x.Act, s.g[:m*ff], s.u[:m*ff])
		quant.MatMul(s.d[:m*e], em[2], s.g[:m*ff], m)
		addExpertBias(s.d[:m*e], w.downBias, ex, e)
		if w.downScale != nil {
			scaleAll(s.d[:m*e], w.downScale[ex])
		}
		for j, r := range s.rows {
			copy(s.ys[int(r)*e:(int(r)+1)*e], s.d[j*e:(j+1)*e])
		}
	}
	s.finish(x, w, out, n, k, e)
}

// finish weighs each token's expert outputs into out, or where the op
// norms its sum or adds it, into d first (free once the experts ran).
func (s *moeScratch) finish(x *plan.MoE, w *layerState, out []float32, n, k, e int) {
	if w.moePost == nil && !x.Add {
		s.weigh(out, n, k, e)
		return
	}
	sum := s.d[:n*e]
	s.weigh(sum, n, k, e)
	if w.moePost != nil {
		rmsNormRows(sum, e, w.moePost, x.Eps)
	}
	if !x.Add {
		copy(out[:n*e], sum)
		return
	}
	addTo(out[:n*e], sum)
}

// moeToken is moe for one token (decode): its k experts' gate and up
// projections as one job (they share the input), one activation pass over
// all of them, and their down projections as one more (each with its own
// input), where running expert by expert would hand the workers 2k jobs.
// Each product is the same call per row as moe's, so the result is the
// same bits. It leaves the k outputs in ys for moe to weigh.
func (b *Backend) moeToken(layer int, x *plan.MoE, w *layerState, in []float32) {
	s := b.experts
	k, e, ff := x.K, b.plan.Embd, x.FF
	if s.resident != nil && b.expertPacks.Evictions() > 0 {
		// the copies outgrew the budget after all (a packed layout
		// larger than the file's): back to the cache's recency
		s.resident = nil
	}
	// mats and dsts: the k gate/up pairs (an ungated activation's k ups
	// alone, into g), then the k downs
	gated := x.Act.Gated()
	ins := 2 * k
	if !gated {
		ins = k
	}
	for j, ex := range s.sel[:k] {
		var g, u, d quant.Matrix
		if s.resident != nil {
			r := b.residentExpert(layer, x, int(ex))
			g, u, d = r[0], r[1], r[2]
		} else {
			gate, up, down := x.Expert(int(ex))
			g, u, d = expertMatrix(gate), expertMatrix(up), expertMatrix(down)
		}
		if gated {
			s.mats[2*j], s.mats[2*j+1] = g, u
			s.dsts[2*j], s.dsts[2*j+1] = s.g[j*ff:(j+1)*ff], s.u[j*ff:(j+1)*ff]
		} else {
			s.mats[j], s.dsts[j] = u, s.g[j*ff:(j+1)*ff]
		}
		s.mats[2*k+j], s.dsts[2*k+j] = d, s.ys[j*e:(j+1)*e]
		s.srcs[j] = s.g[j*ff : (j+1)*ff]
	}
	if s.resident == nil {
		// binds them, for the products below
		b.expertPacks.Use(s.mats[:ins]...)
		b.expertPacks.Use(s.mats[2*k : 3*k]...)
	}
	quant.MatMuls(s.dsts[:ins], s.mats[:ins], in[:e], 1)
	for j, ex := range s.sel[:k] {
		if !gated {
			addExpertBias(s.g[j*ff:(j+1)*ff], w.upBias, int(ex), ff)
			continue
		}
		addExpertBias(s.g[j*ff:(j+1)*ff], w.gateBias, int(ex), ff)
		addExpertBias(s.u[j*ff:(j+1)*ff], w.upBias, int(ex), ff)
	}
	b.activate(x.Act, s.g[:k*ff], s.u[:k*ff])
	quant.MatMulsEach(s.dsts[2*k:3*k], s.mats[2*k:3*k], s.srcs[:k], 1)
	for j, ex := range s.sel[:k] {
		addExpertBias(s.ys[j*e:(j+1)*e], w.downBias, int(ex), e)
		if w.downScale != nil {
			scaleAll(s.ys[j*e:(j+1)*e], w.downScale[ex])
		}
	}
}

// residentExpert returns layer's expert ex's gate, up and down, bound to
// their packed copies, packing them on first use (resident experts only).
func (b *Backend) residentExpert(layer int, x *plan.MoE, ex int) *[3]quant.Matrix {
	s := b.experts
	r := &s.resident[layer*x.Experts+ex]
	if !r.ok {
		gate, up, down := x.Expert(ex)
		r.m = [3]quant.Matrix{expertMatrix(gate), expertMatrix(up), expertMatrix(down)}
		ms := r.m[:]
		if gate.Data == nil {
			ms = ms[1:] // ungated: no gate bank
		}
		b.expertPacks.Use(ms...)
		r.ok = true
	}
	return &r.m
}

// weigh writes out = Σ_slot w·y for each of n tokens from ys, each
// product rounded and added in slot order (ggml_mul, then ggml_add of the
// slots' views).
func (s *moeScratch) weigh(out []float32, n, k, e int) {
	for i := 0; i < n; i++ {
		o := out[i*e : (i+1)*e]
		for j := 0; j < k; j++ {
			w, y := s.wts[i*k+j], s.ys[(i*k+j)*e:(i*k+j+1)*e]
			if j == 0 {
				for t := range o {
					o[t] = y[t] * w
				}
				continue
			}
			for t := range o {
				o[t] += y[t] * w
			}
		}
	}
}

// expertMatrix is an expert's bank as a product reads it: row by row
// whatever the number of tokens routed to it, as llama.cpp's MUL_MAT_ID
// does (it matters to F32 banks' summation order).
func expertMatrix(w plan.Weight) quant.Matrix {
	m := matrix(w)
	m.RowByRow = true
	return m
}

// addExpertBias adds expert ex's row of a per-expert bias (width values
// per expert) to every row of out; a nil bias adds nothing.
func addExpertBias(out, bias []float32, ex, width int) {
	if bias == nil {
		return
	}
	row := bias[ex*width : (ex+1)*width]
	for i := 0; i+width <= len(out); i += width {
		addTo(out[i:i+width], row)
	}
}

// expertPackBudget is how many bytes of packed experts the CPU backend
// keeps: all of them where they fit in half the memory available, else
// that half, the least recently used dropped first (quant.PackCache).
func expertPackBudget(p *plan.Plan) int64 {
	banks := p.ExpertBytes
	if avail := MemAvailable(); avail > 0 {
		return min(banks, avail/2)
	}
	return min(banks, 1<<30)
}
