package vk

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/rand"
	"slices"
	"testing"

	"vkchat/runtime/vk/vulkan"
)

// runHead runs the head kernels on logits (recordHead: one workgroup, or
// the per-slice pass and the merge) and returns the final record.
func runHead(t *testing.T, d *gpu, logits []float32) []byte {
	t.Helper()
	lb, err := d.NewBuffer("logits", uint64(4*len(logits)), vulkan.MemHost)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Release()
	copy(lb.Mapped(), f32bytes(logits))
	out, err := d.NewBuffer("head", 4*headWords, vulkan.MemHost)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	parts, err := d.NewBuffer("head parts", 4*maxHeadGroups*headWords, vulkan.MemDevice)
	if err != nil {
		t.Fatal(err)
	}
	defer parts.Release()
	runOnce(t, d, func(r *vulkan.Recorder) error { return d.recordHead(r, lb, parts, out, len(logits)) })
	return append([]byte(nil), out.Mapped()...)
}

// TestHeadPlan: the first pass covers the vocabulary with slices of whole
// workgroups, as many as the merge can take, none empty.
func TestHeadPlan(t *testing.T) {
	for _, n := range []int{1, 40, 512, 4096, 4097, 32000, 128256, 151936, 1 << 20} {
		g, per := headPlan(n)
		if g < 1 || g > maxHeadGroups || per%headWorkgroup != 0 || g*per < n || (g-1)*per >= n {
			t.Errorf("vocabulary %d: %d groups of %d", n, g, per)
		}
		if n >= 8*headSlice && g != maxHeadGroups {
			t.Errorf("vocabulary %d: %d groups, want %d", n, g, maxHeadGroups)
		}
	}
}

// TestHeadKernel checks the device's top-k and softmax statistics against
// a sort on the host: vocabularies of several sizes (one smaller than k),
// exact ties (ranked by id), NaN (ranked last) and -Inf logits; and a
// distribution too flat for the candidate buffer, which must say so.
func TestHeadKernel(t *testing.T) {
	d := testDevice(t)
	rng := rand.New(rand.NewSource(5))
	for _, tc := range []struct {
		name string
		n    int
		mod  func(l []float32)
	}{
		{"stories vocab", 512, nil},
		{"llama vocab", 32000, nil},
		{"qwen vocab", 151936, nil},
		{"smaller than k", 40, nil},
		{"ties across slices", 40000, func(l []float32) {
			for i := 3; i < len(l); i += 997 {
				l[i] = 20 // 41 tied best tokens in every slice of the first pass
			}
			l[39999] = float32(math.NaN())
		}},
		{"ties, NaN and -Inf", 5000, func(l []float32) {
			for i := 100; i < 200; i++ {
				l[i] = l[7] // a tie with the best
			}
			l[7] = 50
			l[100] = 50
			l[3] = float32(math.NaN())
			l[4] = float32(math.Inf(-1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := make([]float32, tc.n)
			for i := range l {
				l[i] = float32(rng.NormFloat64() * 3)
			}
			if tc.mod != nil {
				tc.mod(l)
			}
			m := runHead(t, d, l)
			u32 := func(i int) uint32 { return binary.LittleEndian.Uint32(m[4*i:]) }
			f32 := func(i int) float32 { return math.Float32frombits(u32(i)) }
			if u32(1) != 0 {
				t.Fatal("overflow reported")
			}
			clean := make([]float32, len(l))
			for i, v := range l {
				if v != v {
					v = float32(math.Inf(-1))
				}
				clean[i] = v
			}
			ids := make([]int32, len(l))
			for i := range ids {
				ids[i] = int32(i)
			}
			slices.SortFunc(ids, func(a, b int32) int {
				if c := cmp.Compare(clean[b], clean[a]); c != 0 {
					return c
				}
				return cmp.Compare(a, b)
			})
			want := min(maxHead, len(l))
			if int(u32(0)) != want {
				t.Fatalf("count %d, want %d", u32(0), want)
			}
			for i := 0; i < want; i++ {
				id, v := int32(u32(8+i)), f32(8+maxHead+i)
				if id != ids[i] || v != clean[ids[i]] {
					t.Fatalf("rank %d: token %d (%g), want %d (%g)", i, id, v, ids[i], clean[ids[i]])
				}
			}
			mx := clean[ids[0]]
			var z, xw float64
			for _, v := range clean {
				x := float64(v) - float64(mx)
				if e := math.Exp(x); e > 0 {
					z += e
					xw += x * e
				}
			}
			if f32(2) != mx || math.Abs(float64(f32(3))-z)/z > 1e-5 || math.Abs(float64(f32(4))-xw) > 1e-5*math.Max(1, math.Abs(xw)) {
				t.Errorf("max %g Z %g Σxe^x %g, want %g %g %g", f32(2), f32(3), f32(4), mx, z, xw)
			}
		})
	}
	t.Run("too flat", func(t *testing.T) {
		l := make([]float32, 20000)
		for i := range l {
			l[i] = 1 // every token ties: all share the k-th's prefix
		}
		if m := runHead(t, d, l); binary.LittleEndian.Uint32(m[4:]) != 1 {
			t.Error("a vocabulary of ties did not report overflow")
		}
	})
}
