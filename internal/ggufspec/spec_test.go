package ggufspec_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"reflect"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

func keys(s *ggufspec.Spec) []string {
	var k []string
	for _, kv := range s.KVs {
		k = append(k, kv.Key)
	}
	return k
}

func TestSetGetDel(t *testing.T) {
	base := func() *ggufspec.Spec {
		return &ggufspec.Spec{KVs: []ggufspec.KV{{"a", uint32(1)}, {"b", "x"}, {"c", float32(2)}}}
	}
	for _, c := range []struct {
		name string
		edit func(*ggufspec.Spec)
		keys []string
		key  string
		want any
	}{
		// A replaced key stays where it was, so that an edit changes one
		// value and nothing else about the file.
		{"replace keeps position", func(s *ggufspec.Spec) { s.Set("b", uint32(7)) }, []string{"a", "b", "c"}, "b", uint32(7)},
		{"new key appends", func(s *ggufspec.Spec) { s.Set("d", true) }, []string{"a", "b", "c", "d"}, "d", true},
		{"del removes", func(s *ggufspec.Spec) { s.Del("a") }, []string{"b", "c"}, "a", nil},
		{"del absent is a no-op", func(s *ggufspec.Spec) { s.Del("z") }, []string{"a", "b", "c"}, "z", nil},
		{"set after del appends", func(s *ggufspec.Spec) { s.Del("a"); s.Set("a", uint32(3)) }, []string{"b", "c", "a"}, "a", uint32(3)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			c.edit(s)
			if got := keys(s); !reflect.DeepEqual(got, c.keys) {
				t.Errorf("keys %v, want %v", got, c.keys)
			}
			if got := s.Get(c.key); got != c.want {
				t.Errorf("Get(%q) = %v, want %v", c.key, got, c.want)
			}
		})
	}
}

func TestCloneLeavesOriginal(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*ggufspec.Spec)
	}{
		{"set", func(s *ggufspec.Spec) { s.Set("general.name", "other") }},
		{"add key", func(s *ggufspec.Spec) { s.Set("x.new", uint32(1)) }},
		{"del key", func(s *ggufspec.Spec) { s.Del("general.architecture") }},
		{"rename key", func(s *ggufspec.Spec) { s.KVs[0].Key = "renamed" }},
		{"dims in place", func(s *ggufspec.Spec) { s.Tensor("token_embd.weight").Dims[0] = 5 }},
		{"retype", func(s *ggufspec.Spec) { _ = s.Tensor("output_norm.weight").Retype(ggml.F16) }},
		{"del tensor", func(s *ggufspec.Spec) { s.DelTensor("blk.0.attn_q.weight") }},
		{"add tensor", func(s *ggufspec.Spec) {
			s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: "x", Type: ggml.F32, Dims: []uint64{1}, Data: make([]byte, 4)})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			orig := ggufspec.Tiny()
			edited := orig.With(c.edit)
			if !reflect.DeepEqual(orig, ggufspec.Tiny()) {
				t.Fatal("editing the clone changed the original")
			}
			if reflect.DeepEqual(edited, orig) {
				t.Fatal("the edit did not reach the clone")
			}
		})
	}
}

func TestRetype(t *testing.T) {
	for _, c := range []struct {
		name  string
		typ   ggml.Type
		dims  []uint64
		dims0 []uint64 // the tensor's shape before
		want  []uint64 // shape after; nil: an error
		bytes int
	}{
		{"F32 keeps shape", ggml.F32, nil, []uint64{8, 10}, []uint64{8, 10}, 320},
		{"F16 keeps shape", ggml.F16, nil, []uint64{8, 10}, []uint64{8, 10}, 160},
		{"F32 new shape", ggml.F32, []uint64{8, 3}, []uint64{8, 10}, []uint64{8, 3}, 96},
		{"Q4_0 in blocks", ggml.Q4_0, []uint64{64, 3}, []uint64{8}, []uint64{64, 3}, 2 * 18 * 3},
		{"Q4_0 part block", ggml.Q4_0, []uint64{8}, []uint64{8}, nil, 0},
		{"zero dim", ggml.F32, []uint64{8, 0}, []uint64{8}, nil, 0},
		{"element count overflows", ggml.F32, []uint64{1 << 32, 1 << 32}, []uint64{8}, nil, 0},
		{"no dims at all", ggml.F32, nil, nil, nil, 0},
		{"unknown type", ggml.Type(200), nil, []uint64{8}, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := &ggufspec.Tensor{Name: "t", Type: ggml.F32, Dims: c.dims0}
			err := ts.Retype(c.typ, c.dims...)
			if c.want == nil {
				if err == nil {
					t.Fatalf("Retype(%v, %v) accepted", c.typ, c.dims)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ts.Type != c.typ || !reflect.DeepEqual(ts.Dims, c.want) || len(ts.Data) != c.bytes {
				t.Fatalf("got %v %v with %d bytes, want %v %v with %d", ts.Type, ts.Dims, len(ts.Data), c.typ, c.want, c.bytes)
			}
			// The writer is the judge of "the right size".
			if _, err := (&ggufspec.Spec{Tensors: []ggufspec.Tensor{*ts}}).Encode(gguf.NewWriter()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// tinySHA256 pins Tiny to the file the per-package builders it replaced
// wrote, so tests that moved onto it still test the same bytes. A change in
// gguf.Writer's output also lands here.
const tinySHA256 = "d1523ea78c70e3ac2fdd7b844c3f3d8ddaee7c299365ab5b0ca8fdfe55c913e1"

func TestTinyRoundTrip(t *testing.T) {
	b, err := ggufspec.Tiny().Encode(gguf.NewWriter())
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != tinySHA256 {
		t.Errorf("Tiny encodes to sha256 %s (%d bytes), want %s", got, len(b), tinySHA256)
	}
	f, err := gguf.Parse("tiny.gguf", b)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fromgguf.Spec(f).Tokens()); n != 10 {
		t.Errorf("%d tokens after parsing, want 10", n)
	}
	again, err := fromgguf.Spec(f).Encode(gguf.NewWriter())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("parse and re-encode differs (%d vs %d bytes)", len(again), len(b))
	}
}

func TestEncodeRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*ggufspec.Spec)
	}{
		{"data size", func(s *ggufspec.Spec) { s.Tensor("output_norm.weight").Data = make([]byte, 3) }},
		{"duplicate tensor", func(s *ggufspec.Spec) { s.Tensors = append(s.Tensors, s.Tensors[0]) }},
		{"unsupported value", func(s *ggufspec.Spec) { s.Set("x", struct{}{}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ggufspec.Tiny().With(c.edit).Encode(gguf.NewWriter()); err == nil {
				t.Fatal("encoded")
			}
		})
	}
}
