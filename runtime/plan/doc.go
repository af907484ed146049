// Package plan resolves a loaded model into the list of typed operations
// its forward pass runs: an input stage, one group of ops per layer and a
// head, with every shape, weight, scale and cache or state slot decided
// here, once. A backend is an executor of these ops (one function per op
// kind); it never asks which architecture it runs, because every quirk of
// a family (a post-norm, a soft-cap, a KV-shared layer, a recurrent mixer)
// is already spelled out as an op or an op's field.
//
// Files:
//   - ops.go: the op kinds and the buffers they read and write
//   - resolve.go: Resolve, the one place a model's declaration
//     (runtime/arch) becomes ops
//   - mtp.go: a multi-token-prediction head resolved as a plan of its
//     own beside the trunk's, and the op that mixes its two inputs
//   - cache.go: the KV-cache and recurrent-state slots, their sizes and
//     the formula the memory panel shows
//   - print.go: the text form `vkchat info --plan` prints and the golden
//     tests compare
//
// The types of weights and of a few per-family parameter sets are
// runtime/arch's, re-exported here (Weight, DeltaNetWeights, ...) so that an
// executor names this package and not the declarations behind it.
package plan
