package models

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// Hostile metadata and weights for models.Load: each case starts from a
// valid model (the tiny synthetic llama, then the real stories260K), changes
// one thing and expects a one-line error naming the key or tensor and the
// problem, with no panic and a bounded allocation. Malformed file structure
// (counts, lengths, offsets) is runtime/gguf's table; this one is about what
// a well-formed file can still get wrong.

type kvSpec struct {
	key string
	val any
}

type tensorSpec struct {
	name string
	typ  ggml.Type
	dims []uint64
	data []byte
}

// spec is a model as a list of keys and tensors, written with gguf.Writer.
type spec struct {
	kvs     []kvSpec
	tensors []tensorSpec
}

func (s *spec) clone() *spec {
	c := &spec{kvs: append([]kvSpec(nil), s.kvs...)}
	for _, t := range s.tensors {
		t.dims = append([]uint64(nil), t.dims...)
		c.tensors = append(c.tensors, t)
	}
	return c
}

func (s *spec) set(key string, v any) {
	for i := range s.kvs {
		if s.kvs[i].key == key {
			s.kvs[i].val = v
			return
		}
	}
	s.kvs = append(s.kvs, kvSpec{key, v})
}

func (s *spec) get(key string) any {
	for _, kv := range s.kvs {
		if kv.key == key {
			return kv.val
		}
	}
	return nil
}

func (s *spec) del(key string) {
	for i := range s.kvs {
		if s.kvs[i].key == key {
			s.kvs = append(s.kvs[:i], s.kvs[i+1:]...)
			return
		}
	}
}

func (s *spec) tensor(t testing.TB, name string) *tensorSpec {
	for i := range s.tensors {
		if s.tensors[i].name == name {
			return &s.tensors[i]
		}
	}
	t.Fatalf("no tensor %q", name)
	return nil
}

func (s *spec) delTensor(name string) {
	for i := range s.tensors {
		if s.tensors[i].name == name {
			s.tensors = append(s.tensors[:i], s.tensors[i+1:]...)
			return
		}
	}
}

// retype gives a tensor a new type and dims with zeroed data of the right size.
func (ts *tensorSpec) retype(t testing.TB, typ ggml.Type, dims ...uint64) {
	n := uint64(1)
	for _, d := range dims {
		n *= d
	}
	rb, ok := typ.RowBytes(dims[0])
	if !ok {
		t.Fatalf("%v row %d", typ, dims[0])
	}
	ts.typ, ts.dims, ts.data = typ, dims, make([]byte, rb*(n/dims[0]))
}

func (s *spec) tokens() []string { return s.get("tokenizer.ggml.tokens").([]string) }

func (s *spec) bytes(t testing.TB) []byte {
	t.Helper()
	w := gguf.NewWriter()
	for _, kv := range s.kvs {
		w.Set(kv.key, kv.val)
	}
	for _, ts := range s.tensors {
		if err := w.AddTensor(ts.name, ts.typ, ts.dims, ts.data); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := w.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func tinySpec() *spec {
	s := &spec{}
	tokens := []string{"<unk>", "<s>", "</s>", "▁", "h", "i", "▁h", "▁hi", "e", "l"}
	scores := make([]float32, len(tokens))
	types := make([]int32, len(tokens))
	for i := range tokens {
		scores[i], types[i] = -float32(i), 1
	}
	types[0], types[1], types[2] = 2, 3, 3
	for _, kv := range []kvSpec{
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
		s.set(kv.key, kv.val)
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
		s.tensors = append(s.tensors, tensorSpec{name, ggml.F32, dims, data})
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

// specFrom takes a parsed file apart (tensor data stays a view of f).
func specFrom(f *gguf.File) *spec {
	s := &spec{}
	for _, kv := range f.KVs {
		v := kv.Value
		if a, ok := v.(gguf.Array); ok {
			v = a.Values
		}
		s.set(kv.Key, v)
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		s.tensors = append(s.tensors, tensorSpec{t.Name, t.Type, append([]uint64(nil), t.Dims...), f.TensorData(t)})
	}
	return s
}

func baseSpecs(t *testing.T) []struct {
	name string
	s    *spec
} {
	out := []struct {
		name string
		s    *spec
	}{{"tiny", tinySpec()}}
	if testenv.SharedDir() == "" {
		t.Log("shared models not found: tiny model only")
		return out
	}
	f, err := gguf.Open(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return append(out, struct {
		name string
		s    *spec
	}{"stories260K", specFrom(f)})
}

// loadMeasured parses and loads b, failing on a panic, and reports the
// bytes allocated by Load.
func loadMeasured(t testing.TB, b []byte) (*Model, error, uint64) {
	t.Helper()
	f, err := gguf.Parse("hostile.gguf", b)
	if err != nil {
		return nil, err, 0
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var m *Model
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Load panicked: %v", p)
			}
		}()
		m, err = Load(f)
	}()
	runtime.ReadMemStats(&after)
	return m, err, after.TotalAlloc - before.TotalAlloc
}

type loadCase struct {
	name  string
	edit  func(t testing.TB, s *spec)
	field string
	msg   string
	ok    bool
}

func setKV(key string, v any) func(testing.TB, *spec) {
	return func(_ testing.TB, s *spec) { s.set(key, v) }
}

func loadCases(base *spec) []loadCase {
	const (
		embd  = `key "llama.embedding_length"`
		eps   = `key "llama.attention.layer_norm_rms_epsilon"`
		theta = `key "llama.rope.freq_base"`
		toks  = `key "tokenizer.ggml.tokens"`
	)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	n := len(base.tokens())
	linear := func(f float32) func(testing.TB, *spec) {
		return func(_ testing.TB, s *spec) {
			s.set("llama.rope.scaling.type", "linear")
			s.set("llama.rope.scaling.factor", f)
		}
	}
	// resizeVocab changes the vocabulary and its per-token arrays
	// consistently, leaving the embedding as it was.
	resizeVocab := func(m int) func(testing.TB, *spec) {
		return func(_ testing.TB, s *spec) {
			toks := s.tokens()
			for len(toks) < m {
				toks = append(toks, fmt.Sprintf("extra%d", len(toks)))
			}
			s.set("tokenizer.ggml.tokens", toks[:m])
			s.set("tokenizer.ggml.scores", make([]float32, m))
			s.set("tokenizer.ggml.token_type", append(make([]int32, 0, m), make([]int32, m)...))
		}
	}
	cases := []loadCase{
		{name: "valid", edit: func(testing.TB, *spec) {}, ok: true},
		{name: "architecture missing", edit: func(_ testing.TB, s *spec) { s.del("general.architecture") },
			field: `key "general.architecture"`, msg: "missing"},
		{name: "architecture as uint32", edit: setKV("general.architecture", uint32(1)),
			field: `key "general.architecture"`, msg: "must be a string, found uint32"},
		{name: "architecture gpt2", edit: setKV("general.architecture", "gpt2"),
			field: `key "general.architecture"`, msg: `architecture "gpt2" is not supported`},
		{name: "architecture empty", edit: setKV("general.architecture", ""),
			field: `key "general.architecture"`, msg: `architecture "" is not supported`},
		{name: "architecture holding OSC 52", edit: setKV("general.architecture", "\x1b]52;c;aGk=\x07"),
			field: `key "general.architecture"`, msg: `architecture "\x1b]52;c;aGk=\a" is not supported`},
		{name: "embedding_length missing", edit: func(_ testing.TB, s *spec) { s.del("llama.embedding_length") }, field: embd, msg: "missing"},
		{name: "embedding_length as string", edit: setKV("llama.embedding_length", "8"), field: embd, msg: "must be an integer, found a string"},
		{name: "embedding_length as float32", edit: setKV("llama.embedding_length", float32(8)), field: embd, msg: "must be an integer, found float32"},
		{name: "embedding_length as array", edit: setKV("llama.embedding_length", []uint32{8}), field: embd, msg: "must be an integer, found an array of uint32"},
		{name: "embedding_length -8", edit: setKV("llama.embedding_length", int32(-8)), field: embd, msg: "must not be negative"},
		{name: "embedding_length 0", edit: setKV("llama.embedding_length", uint32(0)), field: embd, msg: "must be positive"},
		{name: "embedding_length 2^40", edit: setKV("llama.embedding_length", uint64(1<<40)), field: embd, msg: "implausibly large"},
		{name: "embedding_length doubled", edit: func(_ testing.TB, s *spec) {
			s.set("llama.embedding_length", uint32(2*toInt(s.get("llama.embedding_length"))))
		}, field: `tensor "token_embd.weight"`, msg: "shape"},
		{name: "block_count 0", edit: setKV("llama.block_count", uint32(0)), field: `key "llama.block_count"`, msg: "must be positive"},
		{name: "block_count 10^6", edit: setKV("llama.block_count", uint32(1e6)), field: `key "llama.block_count"`, msg: "1000000 layers need at least 9000000 tensors"},
		{name: "block_count 2^24", edit: setKV("llama.block_count", uint32(1<<24)), field: `key "llama.block_count"`, msg: "layers need at least"},
		{name: "block_count 2^32", edit: setKV("llama.block_count", uint64(1<<32)), field: `key "llama.block_count"`, msg: "implausibly large"},
		{name: "block_count one more names the missing layer", edit: func(_ testing.TB, s *spec) {
			s.set("llama.block_count", uint32(toInt(s.get("llama.block_count"))+1))
		}, field: `key "llama.block_count"`, msg: "(there is no tensor \"blk."},
		{name: "head_count 0", edit: setKV("llama.attention.head_count", uint32(0)), field: `key "llama.attention.head_count"`, msg: "does not divide"},
		{name: "head_count 3", edit: setKV("llama.attention.head_count", uint32(3)), field: `key "llama.attention.head_count"`, msg: "3 does not divide"},
		{name: "head_count_kv 0", edit: setKV("llama.attention.head_count_kv", uint32(0)), field: `key "llama.attention.head_count_kv"`, msg: "does not divide"},
		{name: "head_count_kv 3", edit: setKV("llama.attention.head_count_kv", uint32(3)), field: `key "llama.attention.head_count_kv"`, msg: "3 does not divide"},
		{name: "head_count_kv > head_count", edit: setKV("llama.attention.head_count_kv", uint32(16)), field: `key "llama.attention.head_count_kv"`, msg: "does not divide"},
		{name: "feed_forward_length 0", edit: setKV("llama.feed_forward_length", uint32(0)), field: `key "llama.feed_forward_length"`, msg: "must be positive"},
		{name: "feed_forward_length wrong", edit: setKV("llama.feed_forward_length", uint32(24)), field: `tensor "blk.0.ffn_gate.weight"`, msg: "shape"},
		{name: "rms epsilon NaN", edit: setKV("llama.attention.layer_norm_rms_epsilon", nan), field: eps, msg: "NaN is not a small positive number"},
		{name: "rms epsilon 0", edit: setKV("llama.attention.layer_norm_rms_epsilon", float32(0)), field: eps, msg: "not a small positive number"},
		{name: "rms epsilon -1", edit: setKV("llama.attention.layer_norm_rms_epsilon", float32(-1)), field: eps, msg: "not a small positive number"},
		{name: "rms epsilon 2", edit: setKV("llama.attention.layer_norm_rms_epsilon", float32(2)), field: eps, msg: "not a small positive number"},
		{name: "rms epsilon as string", edit: setKV("llama.attention.layer_norm_rms_epsilon", "1e-5"), field: eps, msg: "must be a number, found a string"},
		{name: "rope.freq_base NaN", edit: setKV("llama.rope.freq_base", nan), field: theta, msg: "must be positive"},
		{name: "rope.freq_base +Inf", edit: setKV("llama.rope.freq_base", inf), field: theta, msg: "must be positive"},
		{name: "rope.freq_base 1e300", edit: setKV("llama.rope.freq_base", float64(1e300)), field: theta, msg: "must be positive"},
		{name: "rope.freq_base 0", edit: setKV("llama.rope.freq_base", float32(0)), field: theta, msg: "must be positive"},
		{name: "attention.key_length differs", edit: setKV("llama.attention.key_length", uint32(2)), field: `key "llama.attention.key_length"`, msg: "is not supported"},
		{name: "rope.dimension_count odd", edit: setKV("llama.rope.dimension_count", uint32(3)), field: `key "llama.rope.dimension_count"`, msg: "must be even"},
		{name: "rope.dimension_count 0", edit: setKV("llama.rope.dimension_count", uint32(0)), field: `key "llama.rope.dimension_count"`, msg: "must be even"},
		{name: "rope.dimension_count > head dim", edit: setKV("llama.rope.dimension_count", uint32(1024)), field: `key "llama.rope.dimension_count"`, msg: "at most the head size"},
		{name: "rope.scaling.factor 0", edit: linear(0), field: `key "llama.rope.scaling.factor"`, msg: "must be a positive number"},
		{name: "rope.scaling.factor NaN", edit: linear(nan), field: `key "llama.rope.scaling.factor"`, msg: "must be a positive number"},
		{name: "rope.scaling.factor -2", edit: linear(-2), field: `key "llama.rope.scaling.factor"`, msg: "must be a positive number"},
		{name: "rope.scaling.factor +Inf", edit: linear(inf), field: `key "llama.rope.scaling.factor"`, msg: "must be a positive number"},
		{name: "rope.scaling.factor 4", edit: linear(4), ok: true},

		// The vocabulary.
		{name: "tokens as uint32 array", edit: setKV("tokenizer.ggml.tokens", make([]uint32, n)), field: toks, msg: "must be an array of strings, found an array of uint32"},
		{name: "tokens as a string", edit: setKV("tokenizer.ggml.tokens", "<unk>"), field: toks, msg: "must be an array, found a string"},
		{name: "tokens empty", edit: setKV("tokenizer.ggml.tokens", []string{}), field: toks, msg: "the vocabulary is empty"},
		{name: "vocabulary one token short of the embedding", edit: resizeVocab(n - 1), field: `tensor "token_embd.weight"`, msg: fmt.Sprintf("has %d rows but the vocabulary (tokenizer.ggml.tokens) has %d tokens", n, n-1)},
		{name: "vocabulary one token longer than the embedding", edit: resizeVocab(n + 1), field: `tensor "token_embd.weight"`, msg: fmt.Sprintf("has %d rows but the vocabulary (tokenizer.ggml.tokens) has %d tokens", n, n+1)},
		{name: "scores as UINT8", edit: setKV("tokenizer.ggml.scores", make([]uint8, n)), field: `key "tokenizer.ggml.scores"`, msg: "must be an array of float32, found an array of uint8"},
		{name: "scores as float64", edit: setKV("tokenizer.ggml.scores", make([]float64, n)), field: `key "tokenizer.ggml.scores"`, msg: "must be an array of float32, found an array of float64"},
		{name: "scores one short", edit: setKV("tokenizer.ggml.scores", make([]float32, n-1)), field: `key "tokenizer.ggml.scores"`, msg: fmt.Sprintf("has %d entries for %d tokens", n-1, n)},
		{name: "scores as a scalar", edit: setKV("tokenizer.ggml.scores", float32(0)), field: `key "tokenizer.ggml.scores"`, msg: "must be an array, found float32"},
		{name: "token_type as float32", edit: setKV("tokenizer.ggml.token_type", make([]float32, n)), field: `key "tokenizer.ggml.token_type"`, msg: "must be an array of int32, found an array of float32"},
		{name: "token_type as UINT8", edit: setKV("tokenizer.ggml.token_type", make([]uint8, n)), field: `key "tokenizer.ggml.token_type"`, msg: "must be an array of int32, found an array of uint8"},
		{name: "token_type one long", edit: setKV("tokenizer.ggml.token_type", make([]int32, n+1)), field: `key "tokenizer.ggml.token_type"`, msg: fmt.Sprintf("has %d entries for %d tokens", n+1, n)},
		{name: "token_type uint32 2^31", edit: func(_ testing.TB, s *spec) {
			v := make([]uint32, n)
			v[1] = 1 << 31
			s.set("tokenizer.ggml.token_type", v)
		}, field: `key "tokenizer.ggml.token_type"`, msg: "element 1: 2147483648 does not fit in int32"},
		{name: "merges as int32", edit: setKV("tokenizer.ggml.merges", []int32{1, 2}), field: `key "tokenizer.ggml.merges"`, msg: "must be an array of strings, found an array of int32"},
		{name: "bos id = vocab size", edit: setKV("tokenizer.ggml.bos_token_id", uint32(n)), field: `key "tokenizer.ggml.bos_token_id"`, msg: fmt.Sprintf("token id %d is outside the vocabulary of %d tokens", n, n)},
		{name: "eos id 2^32-2", edit: setKV("tokenizer.ggml.eos_token_id", uint32(math.MaxUint32-1)), field: `key "tokenizer.ggml.eos_token_id"`, msg: "outside the vocabulary"},
		{name: "unknown id 2^40", edit: setKV("tokenizer.ggml.unknown_token_id", uint64(1<<40)), field: `key "tokenizer.ggml.unknown_token_id"`, msg: "outside the vocabulary"},
		{name: "eot id = vocab size", edit: setKV("tokenizer.ggml.eot_token_id", uint32(n)), field: `key "tokenizer.ggml.eot_token_id"`, msg: "outside the vocabulary"},
		{name: "bos id -1 as int32", edit: setKV("tokenizer.ggml.bos_token_id", int32(-1)), field: `key "tokenizer.ggml.bos_token_id"`, msg: "must not be negative"},
		{name: "bos id as string", edit: setKV("tokenizer.ggml.bos_token_id", "1"), field: `key "tokenizer.ggml.bos_token_id"`, msg: "must be an integer, found a string"},
		{name: "padding id 0xFFFFFFFF means none", edit: setKV("tokenizer.ggml.padding_token_id", uint32(math.MaxUint32)), ok: true},
		{name: "3-token vocabulary without a BOS key", edit: func(t testing.TB, s *spec) {
			// Loads: which default BOS applies is the tokenizer's business
			// (it drops defaults that do not fit the vocabulary).
			resizeVocab(3)(t, s)
			s.del("tokenizer.ggml.bos_token_id")
			s.del("tokenizer.ggml.eos_token_id")
			e := toInt(s.get("llama.embedding_length"))
			s.tensor(t, "token_embd.weight").retype(t, ggml.F32, uint64(e), 3)
			s.tensor(t, "output.weight").retype(t, ggml.F32, uint64(e), 3)
		}, ok: true},

		// Weights.
		{name: "qwen2 without its biases", edit: func(_ testing.TB, s *spec) {
			for i := range s.kvs {
				if k, ok := strings.CutPrefix(s.kvs[i].key, "llama."); ok {
					s.kvs[i].key = "qwen2." + k
				}
			}
			s.set("general.architecture", "qwen2")
		}, field: `tensor "blk.0.attn_q.bias"`, msg: "missing"},
		{name: "output_norm as F16", edit: func(t testing.TB, s *spec) {
			ts := s.tensor(t, "output_norm.weight")
			ts.retype(t, ggml.F16, ts.dims...)
		}, field: `tensor "output_norm.weight"`, msg: "vector must be F32, found F16"},
		{name: "attn_q as I8", edit: func(t testing.TB, s *spec) {
			ts := s.tensor(t, "blk.0.attn_q.weight")
			ts.retype(t, ggml.I8, ts.dims...)
		}, field: `tensor "blk.0.attn_q.weight"`, msg: "type I8 is not supported"},
		{name: "token_embd as F64", edit: func(t testing.TB, s *spec) {
			ts := s.tensor(t, "token_embd.weight")
			ts.retype(t, ggml.F64, ts.dims...)
		}, field: `tensor "token_embd.weight"`, msg: "type F64 is not supported"},
		{name: "rope_freqs valid", edit: func(t testing.TB, s *spec) {
			s.tensors = append(s.tensors, tensorSpec{"rope_freqs.weight", ggml.F32, []uint64{uint64(ropeDims(s) / 2)}, make([]byte, 4*(ropeDims(s)/2))})
		}, ok: true},
		{name: "rope_freqs wrong length", edit: func(t testing.TB, s *spec) {
			s.tensors = append(s.tensors, tensorSpec{"rope_freqs.weight", ggml.F32, []uint64{3}, make([]byte, 12)})
		}, field: `tensor "rope_freqs.weight"`, msg: "shape [3]"},
		{name: "rope_freqs as F16", edit: func(t testing.TB, s *spec) {
			s.tensors = append(s.tensors, tensorSpec{"rope_freqs.weight", ggml.F16, []uint64{uint64(ropeDims(s) / 2)}, make([]byte, 2*(ropeDims(s)/2))})
		}, field: `tensor "rope_freqs.weight"`, msg: "vector must be F32"},
	}
	// Every tensor missing, and every tensor in a wrong shape.
	for _, ts := range base.tensors {
		name := ts.name
		c := loadCase{name: "missing " + name, edit: func(_ testing.TB, s *spec) { s.delTensor(name) },
			field: fmt.Sprintf("tensor %q", name), msg: "missing"}
		if name == "output.weight" {
			c.ok, c.field, c.msg = true, "", "" // tied to the embedding
		}
		if name == "token_embd.weight" {
			// Without the embedding there is no vocab/embd cross-check to
			// make; the first thing missing is the embedding itself.
			c.msg = "missing"
		}
		cases = append(cases, c)
		cases = append(cases, loadCase{name: "wrong shape " + name, edit: func(t testing.TB, s *spec) {
			ts := s.tensor(t, name)
			ts.dims = reshaped(ts.dims)
		}, field: fmt.Sprintf("tensor %q", name), msg: "shape"})
	}
	return cases
}

// reshaped keeps the element count and changes the shape: [a b] to [b a],
// a square or a vector to [a/2 2b].
func reshaped(d []uint64) []uint64 {
	if len(d) == 2 && d[0] != d[1] {
		return []uint64{d[1], d[0]}
	}
	rows := uint64(1)
	if len(d) == 2 {
		rows = d[1]
	}
	return []uint64{d[0] / 2, 2 * rows}
}

func toInt(v any) int {
	switch x := v.(type) {
	case uint32:
		return int(x)
	case uint64:
		return int(x)
	}
	panic(fmt.Sprintf("toInt(%T)", v))
}

func ropeDims(s *spec) int {
	if v := s.get("llama.rope.dimension_count"); v != nil {
		return toInt(v)
	}
	return toInt(s.get("llama.embedding_length")) / toInt(s.get("llama.attention.head_count"))
}

func TestLoadHostile(t *testing.T) {
	for _, b := range baseSpecs(t) {
		for _, c := range loadCases(b.s) {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				s := b.s.clone()
				c.edit(t, s)
				m, err, alloc := loadMeasured(t, s.bytes(t))
				if alloc > 64<<20 {
					t.Errorf("Load allocated %d MiB", alloc>>20)
				}
				if c.ok {
					if err != nil {
						t.Fatalf("valid model rejected: %v", err)
					}
					checkModel(t, m)
					return
				}
				if err == nil {
					t.Fatalf("loaded; want an error naming %s", c.field)
				}
				msg := err.Error()
				if strings.ContainsAny(msg, "\n\r\x1b\x07") {
					t.Errorf("error %q is not one clean line", msg)
				}
				if !strings.Contains(msg, c.field) || !strings.Contains(msg, c.msg) {
					t.Errorf("error %q\n  want field %q and message %q", msg, c.field, c.msg)
				}
				// Only an unsupported architecture is a valid file we
				// cannot run; everything else is a format error.
				if !strings.Contains(msg, "is not supported (supported:") && !errors.Is(err, gguf.ErrFormat) {
					t.Errorf("error %q does not wrap gguf.ErrFormat", msg)
				}
				t.Logf("%s (Load allocated %d bytes)", msg, alloc)
			})
		}
	}
}

// checkModel: everything a backend will index is inside what Load returned.
func checkModel(t testing.TB, m *Model) {
	t.Helper()
	check := func(w Weight) {
		if w.Cols <= 0 || w.Rows <= 0 {
			t.Fatalf("%s: %dx%d", w.Name, w.Cols, w.Rows)
		}
		rb, ok := w.Type.RowBytes(uint64(w.Cols))
		if !ok || uint64(len(w.Data)) != rb*uint64(w.Rows) {
			t.Fatalf("%s: %d bytes for %dx%d %v", w.Name, len(w.Data), w.Cols, w.Rows, w.Type)
		}
	}
	check(m.TokenEmbd)
	check(m.OutputNorm)
	check(m.Output)
	if m.TokenEmbd.Rows != m.Vocab || len(m.Layers) != m.Config.Layers {
		t.Fatalf("vocab %d, embedding rows %d", m.Vocab, m.TokenEmbd.Rows)
	}
	for _, l := range m.Layers {
		for _, w := range []Weight{l.AttnNorm, l.Wq, l.Wk, l.Wv, l.Wo, l.FFNNorm, l.Gate, l.Up, l.Down} {
			check(w)
		}
	}
	if m.Rope.FreqFactors != nil && len(m.Rope.FreqFactors) != m.Rope.Dims/2 {
		t.Fatalf("%d rope factors for %d dims", len(m.Rope.FreqFactors), m.Rope.Dims)
	}
}
