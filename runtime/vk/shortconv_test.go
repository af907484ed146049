package vk

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"

	"vkchat/runtime/vk/vulkan"
)

// TestShortConvKernel checks shortconv.comp against the CPU backend's
// cpu.ShortConv over three steps that carry the state (64, 1 and 7
// tokens), kernel lengths 2, 3 and 4, on channel counts that do and do not
// fill the workgroups: the outputs (to the bit: the sums are in the CPU's
// order) and the state after each step.
func TestShortConvKernel(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(11))
	for _, c := range []struct{ embd, L int }{{256, 3}, {100, 2}, {72, 4}} {
		bstride, ystride := int(alignUp(uint64(3*c.embd), 4)), c.embd+8
		taps := randomVec(c.embd*c.L, rng)
		wbuf, err := d.NewBuffer("taps", uint64(4*len(taps)), vulkan.MemDevice)
		if err != nil {
			t.Fatal(err)
		}
		if err := wbuf.Write(0, f32bytes(taps)); err != nil {
			t.Fatal(err)
		}
		sbuf, err := d.NewBuffer("state", uint64(4*(c.L-1)*c.embd), vulkan.MemDevice)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Zero(sbuf); err != nil {
			t.Fatal(err)
		}
		state := make([]float32, (c.L-1)*c.embd)
		k, err := d.kernel("shortconv", 4*4, 64)
		if err != nil {
			t.Fatal(err)
		}
		pos := 0
		for _, n := range []int{prefillChunk, 1, 7} {
			bcu := randomVec(n*3*c.embd, rng)
			padded := make([]float32, n*bstride)
			for i := 0; i < n; i++ {
				copy(padded[i*bstride:], bcu[i*3*c.embd:(i+1)*3*c.embd])
			}
			in, err := d.NewBuffer("bcu", uint64(4*len(padded)), vulkan.MemDevice)
			if err != nil {
				t.Fatal(err)
			}
			if err := in.Write(0, f32bytes(padded)); err != nil {
				t.Fatal(err)
			}
			out, err := d.NewBuffer("y", uint64(4*n*ystride), vulkan.MemDevice)
			if err != nil {
				t.Fatal(err)
			}
			step := stepBuffer(t, d, n, pos, nil)
			runOnce(t, d, func(r *vulkan.Recorder) error {
				return r.Dispatch("shortconv", k, []vulkan.Arg{{B: in, Format: fmtU32}, {B: wbuf, Format: fmtU32}, {B: sbuf, Write: true}, vulkan.W(out), vulkan.R(step)},
					[]uint32{uint32(c.embd), uint32(c.L), uint32(bstride), uint32(ystride)}, uint32((c.embd+63)/64), 1, 1)
			})
			want := make([]float32, n*c.embd)
			cpu.ShortConv(state, taps, bcu, want, n, c.embd, c.L)
			raw := make([]byte, out.Size)
			if err := out.Read(0, raw); err != nil {
				t.Fatal(err)
			}
			all := bytesF32(raw)
			got := make([]float32, 0, n*c.embd)
			for i := 0; i < n; i++ {
				got = append(got, all[i*ystride:i*ystride+c.embd]...)
			}
			sraw := make([]byte, sbuf.Size)
			if err := sbuf.Read(0, sraw); err != nil {
				t.Fatal(err)
			}
			nd := 0
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
					nd++
				}
			}
			if nd != 0 {
				t.Errorf("embd %d L %d, %d tokens at %d: %d outputs differ from the CPU's bits", c.embd, c.L, n, pos, nd)
			}
			if e := nmse(want, got); e > 1e-12 {
				t.Errorf("embd %d L %d, %d tokens at %d: output NMSE %.3g", c.embd, c.L, n, pos, e)
			}
			if e := nmse(state, bytesF32(sraw)); e > 1e-12 {
				t.Errorf("embd %d L %d, %d tokens at %d: state NMSE %.3g", c.embd, c.L, n, pos, e)
			}
			pos += n
		}
	}
}

// TestShortConvRewindMatchesCPU runs synth-lfm2 on both backends through a
// prefill, decode steps, a detour and rewinds to checkpoints, comparing
// every step's logits; the Vulkan backend refuses a step away from its
// state and counts no KV cache for the conv layers.
func TestShortConvRewindMatchesCPU(t *testing.T) {
	testDevice(t)
	m := loadModel(t, testenv.Model(t, "2026/synth-lfm2-F32.gguf"))
	opts := backend.Options{ContextSize: 128, Device: -1}
	vb := newVulkan(t, m, opts)
	cb, err := cpuFor(t, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	vs := vb.(backend.StateBackend)
	mem := vb.Memory()
	if want := int64(2 * 128 * 2 * 64 * 2 * 2); mem.KVAllocated != want || mem.StateBytes != m.StateBytes() {
		t.Errorf("KV %d B, state %d B; want %d and %d", mem.KVAllocated, mem.StateBytes, want, m.StateBytes())
	}
	toks := make([]int32, 90)
	for i := range toks {
		toks[i] = int32(3 + (i*53)%500)
	}
	ctx := context.Background()
	step := func(what string, tokens []int32, pos int) {
		t.Helper()
		ref, err := cb.Forward(ctx, tokens, pos, false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := vb.Forward(ctx, tokens, pos, false)
		if err != nil {
			t.Fatal(err)
		}
		if e := nmse(ref, got); e > archNMSE["F32"] {
			t.Errorf("%s: logits NMSE %.3g", what, e)
		}
	}
	both := func(f func(s backend.StateBackend) int) int {
		a, b := f(cb), f(vs)
		if a != b {
			t.Fatalf("cpu %d, vulkan %d", a, b)
		}
		return a
	}
	step("prefill of 70", toks[:70], 0)
	both(func(s backend.StateBackend) int { s.Checkpoint(); return 0 })
	for i := 70; i < 75; i++ {
		step("decode", toks[i:i+1], i)
	}
	both(func(s backend.StateBackend) int { s.Checkpoint(); return 0 })
	step("detour", toks[10:14], 75)
	if _, err := vb.Forward(ctx, toks[:1], 3, false); err == nil {
		t.Error("a step at 3 with the state at 79 was not refused")
	}
	if at := both(func(s backend.StateBackend) int { return s.Rewind(77) }); at != 75 {
		t.Fatalf("Rewind(77) = %d, want the checkpoint at 75", at)
	}
	step("after the rewind to 75", toks[75:80], 75)
	if at := both(func(s backend.StateBackend) int { return s.Rewind(72) }); at != 70 {
		t.Fatalf("Rewind(72) = %d, want the checkpoint at 70", at)
	}
	if got := vs.Checkpoints(); !slices.Equal(got, []int{70}) {
		t.Errorf("checkpoints %v, want [70]", got)
	}
	step("re-read 70..72", toks[70:72], 70)
	step("decode at 72", toks[72:73], 72)
	if at := both(func(s backend.StateBackend) int { return s.Rewind(5) }); at != 0 {
		t.Fatalf("Rewind(5) = %d, want 0", at)
	}
	step("from the empty state", toks[:3], 0)
}
