package vk

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/quant"
	"vkchat/runtime/vk/vulkan"
)

// ggmlRope rotates x's pairs as ggml's CPU rope compiles (and runtime/cpu
// computes): a·c - b·s and a·s + b·c with the first product fused into the
// sum and the second rounded.
func ggmlRope(x []float32, cos, sin []float32, dims int, neox bool) {
	for i := 0; i < dims/2; i++ {
		a, b := 2*i, 2*i+1
		if neox {
			a, b = i, i+dims/2
		}
		x0, x1 := x[a], x[b]
		x[a] = quant.FMA32(x0, cos[i], -(x1 * sin[i]))
		x[b] = quant.FMA32(x0, sin[i], x1*cos[i])
	}
}

// TestRopeRoundsAsGGML: rope.comp rotates queries and keys bit for bit as
// ggml's CPU rope (one FMA and one rounded product per value), Q scaled
// after, both pairings, into an f32 cache; with Q/K norms (per head, and
// over the whole width), normed first as ggml's rms_norm with QKEXACT, an
// all-F32 model's (squares summed as in double; summed in f32, as a
// quantized model's, 383 and 244 of 1920 values were off on these rows of
// many binades). Rotated as two products
// and a sum (the kernel's before; llvmpipe computes GLSL's fma() so too),
// 355 and 408 of 1920 values were an ulp off, which a quantized cache's
// codes turn into steps.
func TestRopeRoundsAsGGML(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(43))
	for _, c := range []struct {
		neox   bool
		qkNorm uint32 // rope.glsl's QKNORM
	}{{false, 0}, {true, 0}, {true, 1}, {false, 2}} {
		neox := c.neox
		t.Run(fmt.Sprintf("neox%v/qknorm%d", neox, c.qkNorm), func(t *testing.T) {
			cfg := arch.Config{Heads: 4, KVHeads: 2, HeadDim: 64, Rope: arch.Rope{Dims: 64, Base: 10000, NeoX: neox, Scale: 1}}
			ctx, n, pos := 64, 5, 17
			hd, qw, kvw := cfg.HeadDim, cfg.Heads*cfg.HeadDim, cfg.KVHeads*cfg.HeadDim
			qkvStride := qw + 2*kvw
			qkv := make([]float32, 0, n*qkvStride)
			for tk := 0; tk < n; tk++ {
				qkv = append(qkv, wideRow(qkvStride, rng)...)
			}
			nq, nk := 1, 1
			switch c.qkNorm {
			case 1:
				nq, nk = hd, hd
			case 2:
				nq, nk = qw, kvw
			}
			qn, kn := make([]float32, nq), make([]float32, nk)
			for i := range qn {
				qn[i] = float32(0.5 + rng.Float64())
			}
			for i := range kn {
				kn[i] = float32(0.5 + rng.Float64())
			}
			qnb, _ := d.NewBuffer("qn", uint64(4*nq), vulkan.MemDevice)
			qnb.Write(0, f32bytes(qn))
			knb, _ := d.NewBuffer("kn", uint64(4*nk), vulkan.MemDevice)
			knb.Write(0, f32bytes(kn))
			const qscale = 0.125 + 1.0/1024
			b := &Backend{d: d, opts: backend.Options{ContextSize: ctx, KVType: backend.KVF32}, graph: graph{ropeTables: []ropeTable{tableFor(cfg.Rope, ctx)}}}
			b.graph.ropeOff = 256
			step, err := d.NewBuffer("step", uint64(b.graph.ropeOff+8*n*hd/2+64), vulkan.MemHost)
			if err != nil {
				t.Fatal(err)
			}
			b.graph.step = step
			binary.LittleEndian.PutUint32(step.Mapped(), uint32(n))
			binary.LittleEndian.PutUint32(step.Mapped()[4:], uint32(pos))
			b.graph.ropeAngles(pos, n)
			qkvb, _ := d.NewBuffer("qkv", uint64(4*len(qkv)), vulkan.MemDevice)
			qkvb.Write(0, f32bytes(qkv))
			qb, _ := d.NewBuffer("q", uint64(4*n*qw), vulkan.MemDevice)
			cacheBytes := uint64(4 * kvw * ctx)
			kc, _ := d.NewBuffer("kc", cacheBytes, vulkan.MemDevice)
			vc, _ := d.NewBuffer("vc", cacheBytes, vulkan.MemDevice)
			ro := &ropeOp{label: "rope", spec: [7]uint32{uint32(hd), uint32(hd), flag(neox), 1, c.qkNorm, 0, 1},
				table: vulkan.Arg{B: step, Off: 256, Size: step.Size - 256, Format: fmtU32x2}, q: qb, kc: kc, vc: vc, qn: qnb, kn: knb,
				args: ropeArgs{heads: cfg.Heads, kvHeads: cfg.KVHeads, qkvStride: qkvStride, qStride: qw, slots: ctx, rope: true, qScale: qscale, eps: 1e-6}}
			runOnce(t, d, func(r *vulkan.Recorder) error { return d.rope(r, ro, qkvb, step, n) })
			qout, kout := make([]byte, 4*n*qw), make([]byte, cacheBytes)
			qb.Read(0, qout)
			kc.Read(0, kout)
			gq, gk := bytesF32(qout), bytesF32(kout)
			m := step.Mapped()
			cos, sin := make([]float32, hd/2), make([]float32, hd/2)
			bad, total := 0, 0
			for tk := 0; tk < n; tk++ {
				for i := range cos {
					o := b.graph.ropeOff + 8*(tk*hd/2+i)
					cos[i], sin[i] = getF32(m, o), getF32(m, o+4)
				}
				row := append([]float32(nil), qkv[tk*qkvStride:(tk+1)*qkvStride]...)
				switch c.qkNorm {
				case 1:
					for h := 0; h < cfg.Heads; h++ {
						copy(row[h*hd:], ggmlRMSNorm(row[h*hd:(h+1)*hd], qn, 1e-6))
					}
					for h := 0; h < cfg.KVHeads; h++ {
						copy(row[qw+h*hd:], ggmlRMSNorm(row[qw+h*hd:qw+(h+1)*hd], kn, 1e-6))
					}
				case 2:
					copy(row, ggmlRMSNorm(row[:qw], qn, 1e-6))
					copy(row[qw:], ggmlRMSNorm(row[qw:qw+kvw], kn, 1e-6))
				}
				for h := 0; h < cfg.Heads+cfg.KVHeads; h++ {
					ggmlRope(row[h*hd:(h+1)*hd], cos, sin, hd, neox)
				}
				for i := 0; i < qw; i++ {
					total++
					if want := row[i] * qscale; gq[tk*qw+i] != want {
						bad++
					}
				}
				for h := 0; h < cfg.KVHeads; h++ {
					for e := 0; e < hd; e++ {
						total++
						if gk[(h*ctx+pos+tk)*hd+e] != row[qw+h*hd+e] {
							bad++
						}
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d rotated values differ from ggml's rounding", bad, total)
			}
		})
	}
}
