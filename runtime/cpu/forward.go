package cpu

import (
	"vkchat/runtime/plan"
	"vkchat/runtime/quant"
)

// forwardBatch runs tokens (at most maxBatch) at positions pos.. through
// the compiled plan (exec.go): the input steps, every layer's, leaving the
// final residual stream in s.x.
func (b *Backend) forwardBatch(tokens []int32, pos int) {
	b.forwardPass(pass{tokens: tokens, n: len(tokens), pos: pos})
}

// forwardPass is forwardBatch of a pass that may carry more than tokens
// (an MTP head's hidden states).
func (b *Backend) forwardPass(r pass) {
	pos := r.pos
	for _, st := range b.prog.input {
		st(&r)
	}
	for l, layer := range b.prog.layers {
		for _, st := range layer {
			st(&r)
		}
		if b.tap != nil {
			b.tap(l, r.n)
		}
	}
	b.storeKept(r.n, pos)
	if b.hybrid != nil {
		b.hybrid.state.pos = pos + r.n
	}
}

// storeKept writes the batch's keys and values of the rings forwardBatch
// left unwritten (those KV-shared layers read) from the copies kept for
// the shared layers.
func (b *Backend) storeKept(n, pos int) {
	for l, kept := range b.s.shared {
		if kept == nil || b.kv.capacity[l] >= b.opts.ContextSize {
			continue
		}
		kvw := b.kv.widths[l]
		k, v := kept[:n*kvw], kept[len(kept)/2:len(kept)/2+n*kvw]
		for i := 0; i < n; i++ {
			b.kv.store(l, pos+i, k[i*kvw:(i+1)*kvw], v[i*kvw:(i+1)*kvw])
		}
	}
}

// storeBatch writes the batch's keys and values into layer's cache.
func (b *Backend) storeBatch(layer, n, pos int) {
	kvw := b.kv.widths[layer]
	for i := 0; i < n; i++ {
		b.kv.store(layer, pos+i, b.s.k[i*kvw:(i+1)*kvw], b.s.v[i*kvw:(i+1)*kvw])
	}
}

// residual adds a branch's output to the stream, after its post-norm (when
// the recipe has one) and the residual multiplier, in llama.cpp's order.
func (b *Backend) residual(out, post []float32, eps, scale float32, n int) {
	e := b.plan.Embd
	if post != nil {
		rmsNormRows(out, e, post, eps)
	}
	if scale != 1 {
		scaleAll(out, scale)
	}
	addTo(b.s.x[:n*e], out)
}

// activate writes act(gate) * up into gate.
func (b *Backend) activate(act plan.Activation, gate, up []float32) {
	if act == plan.ActReLU2 {
		// ungated: ggml_relu, then ggml_sqr; up is not read
		for i, g := range gate {
			if !(g > 0) {
				g = 0
			}
			gate[i] = g * g
		}
		return
	}
	if act == plan.ActSwiGLUOAI {
		for i, g := range gate {
			gate[i] = swigluOAI(g, up[i])
		}
		return
	}
	if act == plan.ActGELUTanh {
		for i, g := range gate {
			gate[i] = gelu(b.gelu, g) * up[i]
		}
		return
	}
	// element-wise, so both cores share it (quant's pool), in pieces as
	// small as a MoE token's k experts' 4 x 512 values: on one core it was
	// a serial stretch in every layer while the other core waited
	// (docs/benchmarks.md, "2026-12-04 (later): less serial time in a CPU
	// MoE decode step (issue 24)")
	b.call.gate, b.call.up = gate, up
	quant.ParallelRange(len(gate), 512, b.call.swiglu)
}

// logits runs the plan's head (final norm, output projection, logit
// multiplier, soft-cap) on batch rows [from, to) of s.x, writing
// (to-from) x vocab values into out.
func (b *Backend) logits(out []float32, from, to int) {
	r := pass{n: to - from, from: from, logits: out[:(to-from)*b.plan.Vocab]}
	for _, st := range b.prog.head {
		st(&r)
	}
}

func addTo(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}
