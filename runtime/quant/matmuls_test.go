package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"vkchat/runtime/ggml"
)

// TestMatMulsMatchesMatMul checks that products sharing one job give
// MatMul's bits: Q/K/V-like groups of one type (packed and not), K-quant
// mixes that share Q8_K activations, a type that needs other activations
// (its own job), a group of columns that differ, more matrices than one job
// carries, a matrix without rows, for decode and batch sizes, on one and
// two threads.
func TestMatMulsMatchesMatMul(t *testing.T) {
	defer SetThreads(0)
	r := rand.New(rand.NewPCG(21, 22))
	type mat struct {
		typ        ggml.Type
		rows, cols int
	}
	cases := [][]mat{
		{{ggml.Q4_0, 96, 256}, {ggml.Q4_0, 32, 256}, {ggml.Q4_0, 32, 256}},
		{{ggml.Q4_K, 64, 512}, {ggml.Q4_K, 16, 512}, {ggml.Q6_K, 16, 512}},
		{{ggml.Q8_0, 40, 256}, {ggml.Q4_1, 40, 256}, {ggml.Q8_0, 24, 256}},
		{{ggml.Q4_0, 64, 256}, {ggml.Q4_0, 64, 512}},
		{{ggml.F32, 20, 64}, {ggml.F16, 20, 64}, {ggml.Q8_0, 8, 64}, {ggml.Q8_0, 16, 64}, {ggml.Q8_0, 9, 64}},
		{{ggml.Q5_K, 0, 256}, {ggml.Q5_K, 33, 256}},
	}
	for ci, c := range cases {
		ms := make([]Matrix, len(c))
		for i, m := range c {
			ms[i] = randomMatrix(r, m.typ, m.rows, m.cols)
		}
		packed := c[0].typ == ggml.Q4_0 && ci == 0
		if packed {
			free, _ := Pack(ms)
			defer free()
		}
		for _, n := range []int{1, 11} {
			for _, threads := range []int{1, 2} {
				t.Run(fmt.Sprintf("case%d/n%d/t%d", ci, n, threads), func(t *testing.T) {
					SetThreads(threads)
					xs := map[int][]float32{}
					dsts, want := make([][]float32, len(ms)), make([][]float32, len(ms))
					for i, m := range ms {
						if xs[m.Cols] == nil {
							xs[m.Cols] = randVec(r, n*m.Cols)
						}
						want[i] = make([]float32, n*m.Rows)
						MatMul(want[i], m, xs[m.Cols], n)
						dsts[i] = make([]float32, n*m.Rows)
					}
					// one call per run of equal columns, as the backend makes them
					for lo := 0; lo < len(ms); {
						hi := lo + 1
						for hi < len(ms) && ms[hi].Cols == ms[lo].Cols {
							hi++
						}
						MatMuls(dsts[lo:hi], ms[lo:hi], xs[ms[lo].Cols], n)
						lo = hi
					}
					for i := range ms {
						for k := range want[i] {
							if math.Float32bits(dsts[i][k]) != math.Float32bits(want[i][k]) {
								t.Fatalf("matrix %d (%v %dx%d) [%d]: MatMuls %g, MatMul %g", i, ms[i].Type, ms[i].Rows, ms[i].Cols, k, dsts[i][k], want[i][k])
							}
						}
					}
				})
			}
		}
	}
}

// TestMatMulsEachMatchesMatMul: products that each take their own
// activations but share one job (a token's experts' down projections) give
// MatMul's bits: one type, packed or not; a type that breaks the group; more
// matrices than one job carries; MXFP4 (portable only) beside Q4_0.
func TestMatMulsEachMatchesMatMul(t *testing.T) {
	defer SetThreads(0)
	r := rand.New(rand.NewPCG(23, 24))
	type mat struct {
		typ        ggml.Type
		rows, cols int
	}
	many := make([]mat, maxParts+3)
	for i := range many {
		many[i] = mat{ggml.Q4_0, 24 + 8*(i%3), 256}
	}
	cases := [][]mat{
		{{ggml.Q4_0, 64, 256}, {ggml.Q4_0, 64, 256}, {ggml.Q4_0, 64, 256}, {ggml.Q4_0, 64, 256}},
		{{ggml.Q4_K, 32, 512}, {ggml.Q6_K, 16, 512}, {ggml.Q8_0, 24, 512}, {ggml.Q4_K, 8, 512}},
		{{ggml.MXFP4, 40, 256}, {ggml.MXFP4, 40, 256}, {ggml.Q4_0, 40, 256}},
		many,
	}
	for ci, c := range cases {
		ms := make([]Matrix, len(c))
		for i, m := range c {
			ms[i] = randomMatrix(r, m.typ, m.rows, m.cols)
		}
		if ci == 0 {
			free, _ := Pack(ms)
			defer free()
		}
		for _, n := range []int{1, 5} {
			for _, threads := range []int{1, 2} {
				t.Run(fmt.Sprintf("case%d/n%d/t%d", ci, n, threads), func(t *testing.T) {
					SetThreads(threads)
					xs, dsts, want := make([][]float32, len(ms)), make([][]float32, len(ms)), make([][]float32, len(ms))
					for i, m := range ms {
						xs[i] = randVec(r, n*m.Cols)
						want[i] = make([]float32, n*m.Rows)
						MatMul(want[i], m, xs[i], n)
						dsts[i] = make([]float32, n*m.Rows)
					}
					MatMulsEach(dsts, ms, xs, n)
					for i := range ms {
						for k := range want[i] {
							if math.Float32bits(dsts[i][k]) != math.Float32bits(want[i][k]) {
								t.Fatalf("matrix %d (%v %dx%d) [%d]: MatMulsEach %g, MatMul %g", i, ms[i].Type, ms[i].Rows, ms[i].Cols, k, dsts[i][k], want[i][k])
							}
						}
					}
				})
			}
		}
	}
}
