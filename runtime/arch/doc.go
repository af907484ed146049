// Package arch holds the architecture declarations both backends interpret:
// for each supported GGUF architecture, which keys and tensors a file
// carries and which variant of the one transformer block it runs (arch.go,
// one short file per architecture, registry.go). Load resolves a
// declaration against an opened file into a Config (model-wide numbers, the
// Block recipe, per-Layer geometry and weights) and KV layout (kvlayout.go).
//
// It sits below the backends and the engine and above only the file format
// (runtime/gguf, runtime/ggml): runtime/cpu and runtime/vk read a Config and
// nothing else about a model, so an architecture is added here, not as a
// new forward pass. Where model files come from (the hub, the local store,
// the demo) is models/'s business, not this package's.
package arch
