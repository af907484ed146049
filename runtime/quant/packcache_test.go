package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"vkchat/runtime/ggml"
	"vkchat/runtime/simd"
)

// The cache packs a matrix on first use (products then find the copy and
// give the unpacked bits), keeps at most its budget, drops the least
// recently used first but never the matrices of the call, and Free drops
// everything.
func TestPackCache(t *testing.T) {
	if simd.Level() == 0 || portableOnly || repackOff {
		t.Skip("no packed kernels here (" + simd.Describe() + ")")
	}
	r := rand.New(rand.NewPCG(31, 32))
	ms := make([]Matrix, 3)
	for i := range ms {
		ms[i] = randomMatrix(r, ggml.Q4_0, 64, 512)
	}
	size := int64(len(packOne(&ms[0]).data))
	x := randVec(r, 3*512)
	want := make([]float32, 3*64)
	MatMul(want, ms[0], x, 3) // unpacked
	c := NewPackCache(2 * size)
	defer c.Free()
	c.Use(ms[0])
	if lookupPacked(&ms[0]) == nil || c.Bytes() != size {
		t.Fatalf("after first use: packed %v, %d bytes", lookupPacked(&ms[0]) != nil, c.Bytes())
	}
	got := make([]float32, 3*64)
	MatMul(got, ms[0], x, 3)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("[%d] packed %g, unpacked %g", i, got[i], want[i])
		}
	}
	c.Use(ms[1])
	c.Use(ms[0]) // 0 is now more recent than 1
	c.Use(ms[2]) // over budget: 1 goes
	if lookupPacked(&ms[1]) != nil || lookupPacked(&ms[0]) == nil || lookupPacked(&ms[2]) == nil || c.Bytes() != 2*size {
		t.Fatalf("after eviction: packed %v %v %v, %d bytes", lookupPacked(&ms[0]) != nil, lookupPacked(&ms[1]) != nil, lookupPacked(&ms[2]) != nil, c.Bytes())
	}
	c.Use(ms...) // more than the budget in one call: all of it stays for the call
	if lookupPacked(&ms[0]) == nil || lookupPacked(&ms[1]) == nil || lookupPacked(&ms[2]) == nil {
		t.Fatal("a matrix of the call was dropped")
	}
	for i := range ms {
		if !ms[i].bound || ms[i].packed != lookupPacked(&ms[i]) {
			t.Fatalf("Use left matrix %d unbound to its copy", i)
		}
	}
	c.Free()
	if lookupPacked(&ms[0]) != nil || c.Bytes() != 0 {
		t.Fatal("Free left copies")
	}
}
