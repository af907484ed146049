package vk

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"syscall"
	"testing"
	"time"

	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// cpuTime is the process's user and system time: on lavapipe the device is
// the CPU, and a machine shared with other work stretches wall time but
// not this.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPrefillProduct times one prefill chunk's product (64 tokens) on
// the 110M and 1B shapes with the mat-vec (8 tokens per pass) and with the
// tiled product, its sums as floats and as packed int8 dot products
// (tuning.mmDot), reporting GFLOP/s of CPU time as well as of wall time
// (go test -bench PrefillProduct -benchtime 3x ./runtime/vk).
func BenchmarkPrefillProduct(b *testing.B) {
	d := testDevice(b)
	rng := rand.New(rand.NewSource(1))
	const tokens = prefillChunk
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q4_K} {
		for _, sh := range [][2]int{{2048, 768}, {2048, 2048}} {
			rows, cols := sh[0], sh[1]
			w := randomWeights(b, typ, rows, cols, rng)
			m, err := d.uploadMatrix("w", typ, rows, cols, w)
			if err != nil {
				b.Fatal(err)
			}
			x, _ := d.NewBuffer("x", uint64(4*cols*tokens), vulkan.MemDevice)
			x.Write(0, f32bytes(randomVec(cols*tokens, rng)))
			y, _ := d.NewBuffer("y", uint64(4*rows*tokens), vulkan.MemDevice)
			xq, _ := d.NewBuffer("xq", uint64(4*tokens*xqBound(cols)), vulkan.MemDevice)
			step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
			binary.LittleEndian.PutUint32(step.Mapped(), tokens)
			for _, kind := range []string{"matvec", "matmul", "matmul-intdot"} {
				b.Run(fmt.Sprintf("%s/%dx%d/%s", typ, rows, cols, kind), func(b *testing.B) {
					op := matvecOp{label: kind, m: m, x: x, xstride: cols, y: y, ystride: rows, tokens: tokens, step: step}
					tu := d.tune
					tu.mmDot = dotFloat
					if kind != "matvec" {
						op.xq = xq
						if kind == "matmul-intdot" {
							if !d.Info.Features.IntegerDot {
								b.Skip("device without shaderIntegerDotProduct")
							}
							tu.mmDot = dotInt
						}
					}
					withTuning(b, d, tu)
					benchRecorded(b, d, 2*float64(rows)*float64(cols)*tokens, func(r *vulkan.Recorder) error { return d.matvec(r, op) })
				})
			}
		}
	}
}

// BenchmarkGroupedProduct times one prefill chunk's expert products on the
// MoE bench shape (vkchat synth --shape moe: 32 experts, 4 per token, embd
// 1024, expert ff 512; 64 tokens routed at random) with the per-pair
// mat-vec and with the grouped product (moe_group.comp and matmul.comp's
// MOE), gate/up paired then down, reporting GFLOP/s of CPU time as well
// as of wall time (go test -bench GroupedProduct -benchtime 3x ./runtime/vk).
// "dense" runs the whole banks as dense tiled products (every expert for
// every token): the rate the kernel reaches with every tile full.
func BenchmarkGroupedProduct(b *testing.B) {
	d := testDevice(b)
	rng := rand.New(rand.NewSource(1))
	for _, typ := range []ggml.Type{ggml.Q4_0, ggml.Q4_K} {
		b.Run(typ.String(), func(b *testing.B) { benchGrouped(b, d, rng, typ) })
	}
}

func benchGrouped(b *testing.B, d *gpu, rng *rand.Rand, typ ggml.Type) {
	const tokens, experts, k, embd, ff = prefillChunk, 32, 4, 1024, 512
	upload := func(name string, rows, cols int) *Matrix {
		m, err := d.uploadMatrix(name, typ, experts*rows, cols, randomWeights(b, typ, experts*rows, cols, rng))
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	gate, up, down := upload("gate", ff, embd), upload("up", ff, embd), upload("down", embd, ff)
	ids := pairsFor(routeRandom, tokens, k, experts, rng)
	raw := make([]byte, 4*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint32(raw[4*i:], id)
	}
	buf := func(name string, floats int) *vulkan.Buffer {
		bf, err := d.NewBuffer(name, uint64(4*floats), vulkan.MemDevice)
		if err != nil {
			b.Fatal(err)
		}
		return bf
	}
	idb := buf("ids", len(ids))
	idb.Write(0, raw)
	x := buf("x", tokens*embd)
	x.Write(0, f32bytes(randomVec(tokens*embd, rng)))
	h, h2, y := buf("h", tokens*k*ff), buf("h2", tokens*k*ff), buf("y", tokens*k*embd)
	xq, hq := buf("xq", tokens*xqBound(embd)), buf("hq", tokens*k*xqBound(ff))
	groups := buf("groups", 2*experts+tokens*k)
	step, _ := d.NewBuffer("step", 64, vulkan.MemHost)
	binary.LittleEndian.PutUint32(step.Mapped(), tokens)
	rows := moeRows{ids: idb, k: k, experts: experts}
	ffn := matvecOp{label: "gate+up", m: gate, m2: up, x: x, xstride: embd, y: h, y2: h2, ystride: ff, tokens: tokens, step: step, moe: rows, xq: xq}
	rows.perPair = true
	dn := matvecOp{label: "down", m: down, x: h, xstride: ff, y: y, ystride: embd, tokens: tokens, step: step, moe: rows, xq: hq}
	yd := buf("yd", tokens*experts*embd)
	for _, kind := range []string{"per-pair", "grouped", "dense"} {
		b.Run(kind, func(b *testing.B) {
			flop := 2 * 3 * float64(ff) * float64(embd) * tokens * k
			if kind == "dense" {
				flop *= experts / k
			}
			benchRecorded(b, d, flop, func(r *vulkan.Recorder) error {
				if kind == "grouped" {
					if err := d.moeGroup(r, "group", experts, k, idb, groups, step, tokens); err != nil {
						return err
					}
				}
				for _, op := range []matvecOp{ffn, dn} {
					var err error
					if kind == "dense" {
						op.moe, op.x, op.xstride, op.xq = moeRows{}, x, op.m.Cols, hq
						op.y, op.y2, op.ystride = yd, yd, op.m.Rows
						err = d.matmul(r, op)
					} else if kind == "grouped" {
						err = d.matmulOn(r, op, groups)
					} else {
						err = d.matvec(r, op)
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

// benchRecorded records what record records once, runs it once untimed
// (llvmpipe compiles on first use), then b.N times, and reports flop
// (per run) as GFLOP per second of CPU time and of wall time.
func benchRecorded(b *testing.B, d *gpu, flop float64, record func(r *vulkan.Recorder) error) {
	b.Helper()
	r, err := d.NewRecorder(0)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Begin(); err != nil {
		b.Fatal(err)
	}
	if err := record(r); err != nil {
		b.Fatal(err)
	}
	if err := r.End(); err != nil {
		b.Fatal(err)
	}
	if err := r.Run(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	c0, t0 := cpuTime(), time.Now()
	for i := 0; i < b.N; i++ {
		if err := r.Run(); err != nil {
			b.Fatal(err)
		}
	}
	flop *= float64(b.N)
	b.ReportMetric(flop/float64(cpuTime()-c0), "GFLOP/cpu-s")
	b.ReportMetric(flop/float64(time.Since(t0)), "GFLOP/s")
}
