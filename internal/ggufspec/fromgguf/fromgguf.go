// Package fromgguf takes a parsed GGUF file apart into a ggufspec.Spec. It
// lives apart from ggufspec because it needs runtime/gguf, whose in-package
// tests import ggufspec.
package fromgguf

import (
	"vkchat/internal/ggufspec"
	"vkchat/runtime/gguf"
)

// Spec returns f as a spec. Arrays become their typed slices, so edits can
// work on []string or []float32 as Tiny's do. Tensor data stays a view of
// f: keep f open while the spec is in use.
func Spec(f *gguf.File) *ggufspec.Spec {
	s := &ggufspec.Spec{}
	for _, kv := range f.KVs {
		v := kv.Value
		if a, ok := v.(gguf.Array); ok {
			v = a.Values
		}
		s.Set(kv.Key, v)
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: t.Name, Type: t.Type, Dims: append([]uint64(nil), t.Dims...), Data: f.TensorData(t)})
	}
	return s
}
