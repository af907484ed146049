// Package ggufspec describes a GGUF model as plain lists of keys and
// tensors that tests edit one field at a time and write with the real
// writer. Hostile-input tests in runtime/gguf, models and cmd/vkchat share
// it so that "the tiny llama with one thing changed" means the same file
// everywhere.
//
// It does not import runtime/gguf: the reader's own in-package tests use it,
// and an import back would be a cycle. Callers pass gguf.NewWriter() to
// Encode, and internal/ggufspec/fromgguf turns a parsed file into a Spec.
package ggufspec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"

	"vkchat/runtime/ggml"
)

// KV is one metadata entry. Value holds what gguf.Writer.Set accepts.
type KV struct {
	Key   string
	Value any
}

// Tensor is one tensor with its data already in Type's layout.
type Tensor struct {
	Name string
	Type ggml.Type
	Dims []uint64
	Data []byte
}

// Spec is a model in file order: metadata, then tensors.
type Spec struct {
	KVs     []KV
	Tensors []Tensor
}

// Writer is the part of *gguf.Writer that Encode needs.
type Writer interface {
	Set(key string, v any)
	AddTensor(name string, typ ggml.Type, dims []uint64, data []byte) error
	Write(out io.Writer) error
}

// Clone copies the lists and every tensor's dims, so that editing, adding
// or removing in the clone leaves s as it was. Values and tensor data are
// shared: edits replace them rather than write into them.
func (s *Spec) Clone() *Spec {
	c := &Spec{KVs: append([]KV(nil), s.KVs...), Tensors: make([]Tensor, len(s.Tensors))}
	for i, t := range s.Tensors {
		t.Dims = append([]uint64(nil), t.Dims...)
		c.Tensors[i] = t
	}
	return c
}

// With returns a clone of s changed by edit, for one-line variants of a base.
func (s *Spec) With(edit func(*Spec)) *Spec {
	c := s.Clone()
	edit(c)
	return c
}

// Set replaces key's value where it stands, keeping the file's key order, or
// appends the key.
func (s *Spec) Set(key string, v any) {
	for i := range s.KVs {
		if s.KVs[i].Key == key {
			s.KVs[i].Value = v
			return
		}
	}
	s.KVs = append(s.KVs, KV{key, v})
}

// Get returns key's value, or nil when it is absent.
func (s *Spec) Get(key string) any {
	for _, kv := range s.KVs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// Del removes key if present.
func (s *Spec) Del(key string) {
	for i := range s.KVs {
		if s.KVs[i].Key == key {
			s.KVs = append(s.KVs[:i], s.KVs[i+1:]...)
			return
		}
	}
}

// Tokens returns the vocabulary; it panics when tokenizer.ggml.tokens is
// not a []string, which only a spec edited on purpose can reach.
func (s *Spec) Tokens() []string { return s.Get("tokenizer.ggml.tokens").([]string) }

// Tensor returns the named tensor for editing in place, or nil.
func (s *Spec) Tensor(name string) *Tensor {
	for i := range s.Tensors {
		if s.Tensors[i].Name == name {
			return &s.Tensors[i]
		}
	}
	return nil
}

// DelTensor removes the named tensor if present.
func (s *Spec) DelTensor(name string) {
	for i := range s.Tensors {
		if s.Tensors[i].Name == name {
			s.Tensors = append(s.Tensors[:i], s.Tensors[i+1:]...)
			return
		}
	}
}

// Retype gives t a new type and shape with zeroed data of the size the type
// needs, so the writer accepts it and only the reader's checks decide. With
// no dims the shape stays.
func (t *Tensor) Retype(typ ggml.Type, dims ...uint64) error {
	if len(dims) == 0 {
		dims = t.Dims
	}
	if len(dims) == 0 {
		return fmt.Errorf("ggufspec: tensor %q: no dims", t.Name)
	}
	n := uint64(1)
	for _, d := range dims {
		hi, lo := bits.Mul64(n, d)
		if d == 0 || hi != 0 {
			return fmt.Errorf("ggufspec: tensor %q: bad dims %v", t.Name, dims)
		}
		n = lo
	}
	rb, ok := typ.RowBytes(dims[0])
	hi, size := bits.Mul64(rb, n/dims[0])
	if !ok || hi != 0 || size > math.MaxInt {
		return fmt.Errorf("ggufspec: tensor %q: %v cannot hold dims %v", t.Name, typ, dims)
	}
	t.Type, t.Dims, t.Data = typ, append([]uint64(nil), dims...), make([]byte, size)
	return nil
}

// Encode writes s with w (a fresh gguf.NewWriter()) and returns the file.
func (s *Spec) Encode(w Writer) ([]byte, error) {
	for _, kv := range s.KVs {
		w.Set(kv.Key, kv.Value)
	}
	for _, t := range s.Tensors {
		if err := w.AddTensor(t.Name, t.Type, t.Dims, t.Data); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	if err := w.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Tiny is a small llama with every tensor arch.Load expects: 2 layers,
// embd 8, 2 heads, 1 KV head, ff 16, a 10-token SPM vocabulary and F32
// weights from a fixed LCG, so every call gives the same file.
func Tiny() *Spec {
	s := &Spec{}
	tokens := []string{"<unk>", "<s>", "</s>", "▁", "h", "i", "▁h", "▁hi", "e", "l"}
	scores := make([]float32, len(tokens))
	types := make([]int32, len(tokens))
	for i := range tokens {
		scores[i], types[i] = -float32(i), 1
	}
	types[0], types[1], types[2] = 2, 3, 3
	for _, kv := range []KV{
		{"general.architecture", "llama"}, {"general.name", "tiny"},
		{"llama.context_length", uint32(64)}, {"llama.embedding_length", uint32(8)},
		{"llama.feed_forward_length", uint32(16)}, {"llama.block_count", uint32(2)},
		{"llama.attention.head_count", uint32(2)}, {"llama.attention.head_count_kv", uint32(1)},
		{"llama.rope.dimension_count", uint32(4)}, {"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"tokenizer.ggml.model", "llama"}, {"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", scores}, {"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.bos_token_id", uint32(1)}, {"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
	} {
		s.Set(kv.Key, kv.Value)
	}
	seed := uint32(1)
	add := func(name string, dims ...uint64) {
		n := uint64(1)
		for _, d := range dims {
			n *= d
		}
		data := make([]byte, 4*n)
		for i := uint64(0); i < n; i++ {
			seed = seed*1664525 + 1013904223
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(int32(seed>>8)%1000)/4000))
		}
		s.Tensors = append(s.Tensors, Tensor{name, ggml.F32, dims, data})
	}
	add("token_embd.weight", 8, 10)
	add("output_norm.weight", 8)
	add("output.weight", 8, 10)
	for l := 0; l < 2; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", 8)
		add(p+"attn_q.weight", 8, 8)
		add(p+"attn_k.weight", 8, 4)
		add(p+"attn_v.weight", 8, 4)
		add(p+"attn_output.weight", 8, 8)
		add(p+"ffn_norm.weight", 8)
		add(p+"ffn_gate.weight", 8, 16)
		add(p+"ffn_up.weight", 8, 16)
		add(p+"ffn_down.weight", 16, 8)
	}
	return s
}
