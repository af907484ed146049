// Package arch holds the architecture declarations: for each supported
// GGUF architecture, which keys and tensors a file carries and which
// variant of the one transformer block it runs (arch.go, registry.go, a
// file per architecture: ten-odd lines for a llama variant, a few hundred
// for a hybrid with mixers of its own such as qwen35.go or gemma4.go).
// Load resolves a declaration against an opened file into a Config
// (model-wide numbers, the Block recipe, per-Layer geometry and weights);
// the KV cache's and recurrent state's slots are laid out from it by
// runtime/plan.
//
// It sits below runtime/plan, the backends and the engine and above only
// the file format (runtime/gguf, runtime/ggml). runtime/plan turns a
// Config into the per-layer ops the backends run, so an architecture is
// added here (and, for a new kind of op, in the plan and its executors),
// not as a new forward pass. Where model files come from (the hub, the
// local store, the demo) is models/'s business, not this package's.
package arch
