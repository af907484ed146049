package vk

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/ggml"
	"vkchat/runtime/vk/vulkan"
)

// TestRopeEpilogue runs a prompt and decode steps on the GPU layout with a
// decode step's rotation in the last workgroup of the Q|K|V product
// (matvec_sg.comp's ROPE) and with a rope.comp dispatch after it: the same
// arithmetic on the same values, so every logit must agree to the bit. The
// models cover the rotation's forms: RoPE alone on a quantized product
// (llama, Q4_0), per-head Q/K norms (qwen3), full-width ones (olmo2),
// sliding-window rings and a Q scale (gemma2), V norms and layers that read
// another layer's cache, Q only (gemma4); the quantized model once more
// with the integer-dot mat-vec (matvec_id.comp's ROPE_EPI), where the
// device has the integer dot product. The arrival counter must be back at
// zero after every step, or the next step's rotation would run early.
func TestRopeEpilogue(t *testing.T) {
	d := testDevice(t)
	type ropeCase struct {
		name   string
		intDot bool
	}
	cases := []ropeCase{{"synth-Q4_0.gguf", false}, {"synth-qwen3-F32.gguf", false}, {"synth-olmo2-F32.gguf", false}, {"synth-gemma2-F32.gguf", false}, {"2026/synth-gemma4-F32.gguf", false}}
	if d.Info.Features.IntegerDot {
		cases = append(cases, ropeCase{"synth-Q4_0.gguf", true})
	} else {
		t.Log("no integer dot product on this device: the integer-dot epilogue is not checked")
	}
	for _, c := range cases {
		name := c.name
		if c.intDot {
			name += ",int-dot"
		}
		t.Run(name, func(t *testing.T) {
			m := loadModel(t, testenv.Shared(t, filepath.Join("models", c.name)))
			prompt := make([]int32, 21)
			for i := range prompt {
				prompt[i] = int32(1 + (i*37)%200)
			}
			const steps = 5
			run := func(fused bool) (logits [][]float32, epilogues, dispatches int) {
				tu := gpuTuning
				tu.intDot = c.intDot
				tu.attnGran, tu.attnLanes = 4, 16 // several splits on a short context
				tu.ropeInQKV = fused
				withTuning(t, d, tu)
				vb, err := newTestBackend(d, m, backend.Options{ContextSize: 64, Device: -1}, true, true) // profiled: labels kept
				if err != nil {
					t.Fatal(err)
				}
				defer vb.Close()
				for _, rec := range vb.graph.decode.Recorded() {
					switch {
					case strings.HasSuffix(rec.Label, "+ rope"):
						if want := map[bool]string{false: "matvec_sg_rope_", true: "matvec_id_rope_"}[c.intDot]; !strings.HasPrefix(rec.Kernel, want) {
							t.Errorf("%s ran %s, want %s*", rec.Label, rec.Kernel, want)
						}
						epilogues++
					case strings.HasSuffix(rec.Label, " rope"):
						dispatches++
					}
				}
				ctx := context.Background()
				out, err := vb.Forward(ctx, prompt, 0, false)
				if err != nil {
					t.Fatal(err)
				}
				logits = append(logits, out)
				for s := 0; s < steps; s++ {
					next := int32(argmax(out))
					if out, err = vb.Forward(ctx, []int32{next}, len(prompt)+s, false); err != nil {
						t.Fatal(err)
					}
					logits = append(logits, out)
					if vb.act.ropeArrive != nil {
						var w [4]byte
						vb.act.ropeArrive.Read(0, w[:])
						if c := binary.LittleEndian.Uint32(w[:]); c != 0 {
							t.Fatalf("step %d: the arrival counter reads %d after the step, want 0", s, c)
						}
					}
				}
				return logits, epilogues, dispatches
			}
			fused, fe, fd := run(true)
			sep, se, sd := run(false)
			layers := fe + fd
			if fe == 0 || fd != 0 || se != 0 || sd != layers {
				t.Fatalf("decode rotations: fused %d epilogues + %d dispatches, separate %d + %d; want all %d as epilogues, then all as dispatches", fe, fd, se, sd, layers)
			}
			for i := range fused {
				for j := range fused[i] {
					if math.Float32bits(fused[i][j]) != math.Float32bits(sep[i][j]) {
						t.Fatalf("step %d logit %d: %g with the epilogue, %g with rope.comp", i, j, fused[i][j], sep[i][j])
					}
				}
			}
			t.Logf("%d layers rotated in the Q|K|V product; %d steps bit-identical", layers, len(fused))
		})
	}
}

// TestRopeEpilogueTypes checks every compiled variant of the epilogue: a
// decode token's Q|K|V product of each weight type (and with the
// integer-dot mat-vec for each quantized one, where the device has it)
// with per-head Q/K norms, NeoX rotation and an F16 cache, once with the
// rotation in its last workgroup and once with a rope.comp dispatch after
// it. Q, the cache rows and the product's own rows must agree to the bit,
// the fused run must have run the variant, and the counter be back at 0.
func TestRopeEpilogueTypes(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(23))
	cfg := arch.Config{Embd: 256, Heads: 4, KVHeads: 2, HeadDim: 64, Rope: arch.Rope{Dims: 64, Base: 10000, NeoX: true, Scale: 1}}
	const ctx, pos, cols = 16, 9, 256
	hd, qw, kvw := cfg.HeadDim, cfg.Heads*cfg.HeadDim, cfg.KVHeads*cfg.HeadDim
	rows := qw + 2*kvw
	b := &Backend{d: d, opts: backend.Options{ContextSize: ctx, KVType: backend.KVF16}, graph: graph{ropeTables: []ropeTable{tableFor(cfg.Rope, ctx)}}}
	b.graph.ropeOff = 256
	var err error
	if b.graph.step, err = d.NewBuffer("step", uint64(b.graph.ropeOff+8*hd/2+64), vulkan.MemHost); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b.graph.step.Mapped(), 1)
	binary.LittleEndian.PutUint32(b.graph.step.Mapped()[4:], pos)
	b.graph.ropeAngles(pos, 1)
	upload := func(name string, v []float32) *vulkan.Buffer {
		buf, err := d.NewBuffer(name, uint64(4*len(v)), vulkan.MemDevice)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(0, f32bytes(v))
		return buf
	}
	x, nw := upload("x", randomVec(cols, rng)), upload("nw", randomVec(cols, rng))
	qn, kn := upload("qn", randomVec(hd, rng)), upload("kn", randomVec(hd, rng))
	xq, _ := d.NewBuffer("xq", uint64(4*xqBound(cols)), vulkan.MemDevice)
	cacheBytes := cfg.KVHeads * ctx * hd * 2
	types := []ggml.Type{ggml.F32, ggml.F16, ggml.BF16, ggml.Q4_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.Q8_0, ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.MXFP4}
	for _, typ := range types {
		m, err := d.uploadMatrix("wqkv", typ, rows, cols, randomWeights(t, typ, rows, cols, rng))
		if err != nil {
			t.Fatal(err)
		}
		for _, intDot := range []bool{false, true} {
			if intDot && (!typ.Quantized() || !d.Info.Features.IntegerDot) {
				continue
			}
			t.Run(fmt.Sprintf("%s/intdot%v", typ, intDot), func(t *testing.T) {
				// run returns Q, both caches and the product's rows
				run := func(fused bool) (out [4][]byte) {
					tu := gpuTuning
					tu.intDot, tu.ropeInQKV = intDot, fused
					withTuning(t, d, tu)
					y, _ := d.NewBuffer("qkv", uint64(4*rows), vulkan.MemDevice)
					q, _ := d.NewBuffer("q", uint64(4*qw), vulkan.MemDevice)
					kc, _ := d.NewBuffer("kc", uint64(cacheBytes), vulkan.MemDevice)
					vc, _ := d.NewBuffer("vc", uint64(cacheBytes), vulkan.MemDevice)
					arrive, _ := d.NewBuffer("arrive", 4, vulkan.MemDevice)
					arrive.Write(0, make([]byte, 4))
					ro := &ropeOp{label: "rope", spec: [7]uint32{uint32(hd), uint32(hd), 1, 0, uint32(arch.QKNormHead), 0},
						table: vulkan.Arg{B: b.graph.step, Off: 256, Size: b.graph.step.Size - 256, Format: fmtU32x2}, q: q, kc: kc, vc: vc, qn: qn, kn: kn,
						args: ropeArgs{heads: cfg.Heads, kvHeads: cfg.KVHeads, qkvStride: rows, qStride: qw, slots: ctx, rope: true, qScale: 1, eps: 1e-6}, arrive: arrive}
					op := matvecOp{label: "qkv", m: m, x: x, xstride: cols, norm: nw, eps: 1e-5, y: y, ystride: rows, tokens: 1, step: b.graph.step, xq: xq, rope: ro}
					rec := runOnce(t, d, func(r *vulkan.Recorder) error { return d.matvec(r, op) })
					var kernels []string
					epilogue, dispatch := false, false
					want := map[bool]string{false: "matvec_sg_rope_", true: "matvec_id_rope_"}[intDot]
					for _, dm := range rec.Recorded() {
						kernels = append(kernels, dm.Kernel)
						epilogue = epilogue || strings.HasPrefix(dm.Kernel, want)
						dispatch = dispatch || dm.Kernel == "rope"
					}
					if epilogue != fused || dispatch == fused {
						t.Fatalf("fused %v: kernels %v, want %s* or a rope dispatch", fused, kernels, want)
					}
					for i, buf := range []*vulkan.Buffer{q, kc, vc, y, arrive} {
						raw := make([]byte, buf.Size)
						buf.Read(0, raw)
						if i == 4 {
							if c := binary.LittleEndian.Uint32(raw); c != 0 {
								t.Fatalf("the arrival counter reads %d after the product, want 0", c)
							}
							continue
						}
						out[i] = raw
					}
					return out
				}
				fused, sep := run(true), run(false)
				for i, name := range []string{"q", "k cache", "v cache", "q|k|v rows"} {
					if !bytes.Equal(fused[i], sep[i]) {
						t.Errorf("%s differs between the epilogue and rope.comp", name)
					}
				}
			})
		}
	}
}
