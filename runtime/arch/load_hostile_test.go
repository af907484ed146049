package arch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/internal/ggufspec/fromgguf"
	"vkchat/internal/testenv"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// Hostile metadata and weights for arch.Load: each case starts from a
// valid model (the tiny synthetic llama, then the real stories260K), changes
// one thing and expects a one-line error naming the key or tensor and the
// problem, with no panic and a bounded allocation. Malformed file structure
// (counts, lengths, offsets) is runtime/gguf's table; this one is about what
// a well-formed file can still get wrong.

func encode(t testing.TB, s *ggufspec.Spec) []byte {
	t.Helper()
	b, err := s.Encode(gguf.NewWriter())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tensor(t testing.TB, s *ggufspec.Spec, name string) *ggufspec.Tensor {
	t.Helper()
	ts := s.Tensor(name)
	if ts == nil {
		t.Fatalf("no tensor %q", name)
	}
	return ts
}

// retype fails the test, not the case: a tensor the writer would refuse is
// a broken case rather than something for Load to reject.
func retype(t testing.TB, s *ggufspec.Spec, name string, typ ggml.Type, dims ...uint64) {
	t.Helper()
	if err := tensor(t, s, name).Retype(typ, dims...); err != nil {
		t.Fatal(err)
	}
}

func baseSpecs(t *testing.T) []struct {
	name string
	s    *ggufspec.Spec
} {
	out := []struct {
		name string
		s    *ggufspec.Spec
	}{{"tiny", ggufspec.Tiny()}}
	if testenv.Fixture("models/stories260K.gguf") == "" {
		t.Log(testenv.Missing("models/stories260K.gguf") + ": tiny model only")
		return out
	}
	f, err := gguf.Open(testenv.Model(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return append(out, struct {
		name string
		s    *ggufspec.Spec
	}{"stories260K", fromgguf.Spec(f)})
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
	edit  func(t testing.TB, s *ggufspec.Spec)
	field string
	msg   string
	ok    bool
}

func setKV(key string, v any) func(testing.TB, *ggufspec.Spec) {
	return func(_ testing.TB, s *ggufspec.Spec) { s.Set(key, v) }
}

func loadCases(base *ggufspec.Spec) []loadCase {
	const (
		embd  = `key "llama.embedding_length"`
		eps   = `key "llama.attention.layer_norm_rms_epsilon"`
		theta = `key "llama.rope.freq_base"`
		toks  = `key "tokenizer.ggml.tokens"`
	)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	n := len(base.Tokens())
	linear := func(f float32) func(testing.TB, *ggufspec.Spec) {
		return func(_ testing.TB, s *ggufspec.Spec) {
			s.Set("llama.rope.scaling.type", "linear")
			s.Set("llama.rope.scaling.factor", f)
		}
	}
	// resizeVocab changes the vocabulary and its per-token arrays
	// consistently, leaving the embedding as it was.
	resizeVocab := func(m int) func(testing.TB, *ggufspec.Spec) {
		return func(_ testing.TB, s *ggufspec.Spec) {
			toks := append([]string(nil), s.Tokens()...) // the base spec shares its slice
			for len(toks) < m {
				toks = append(toks, fmt.Sprintf("extra%d", len(toks)))
			}
			s.Set("tokenizer.ggml.tokens", toks[:m])
			s.Set("tokenizer.ggml.scores", make([]float32, m))
			s.Set("tokenizer.ggml.token_type", append(make([]int32, 0, m), make([]int32, m)...))
		}
	}
	cases := []loadCase{
		{name: "valid", edit: func(testing.TB, *ggufspec.Spec) {}, ok: true},
		{name: "architecture missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("general.architecture") },
			field: `key "general.architecture"`, msg: "missing"},
		{name: "architecture as uint32", edit: setKV("general.architecture", uint32(1)),
			field: `key "general.architecture"`, msg: "must be a string, found uint32"},
		{name: "architecture gpt2", edit: setKV("general.architecture", "gpt2"),
			field: `key "general.architecture"`, msg: `architecture "gpt2" is not supported`},
		{name: "architecture empty", edit: setKV("general.architecture", ""),
			field: `key "general.architecture"`, msg: `architecture "" is not supported`},
		{name: "architecture holding OSC 52", edit: setKV("general.architecture", "\x1b]52;c;aGk=\x07"),
			field: `key "general.architecture"`, msg: `architecture "\x1b]52;c;aGk=\a" is not supported`},
		{name: "embedding_length missing", edit: func(_ testing.TB, s *ggufspec.Spec) { s.Del("llama.embedding_length") }, field: embd, msg: "missing"},
		{name: "embedding_length as string", edit: setKV("llama.embedding_length", "8"), field: embd, msg: "must be an integer, found a string"},
		{name: "embedding_length as float32", edit: setKV("llama.embedding_length", float32(8)), field: embd, msg: "must be an integer, found float32"},
		{name: "embedding_length as array", edit: setKV("llama.embedding_length", []uint32{8}), field: embd, msg: "must be an integer, found an array of uint32"},
		{name: "embedding_length -8", edit: setKV("llama.embedding_length", int32(-8)), field: embd, msg: "must not be negative"},
		{name: "embedding_length 0", edit: setKV("llama.embedding_length", uint32(0)), field: embd, msg: "must be positive"},
		{name: "embedding_length 2^40", edit: setKV("llama.embedding_length", uint64(1<<40)), field: embd, msg: "implausibly large"},
		{name: "embedding_length doubled", edit: func(_ testing.TB, s *ggufspec.Spec) {
			s.Set("llama.embedding_length", uint32(2*toInt(s.Get("llama.embedding_length"))))
		}, field: `tensor "token_embd.weight"`, msg: "shape"},
		{name: "block_count 0", edit: setKV("llama.block_count", uint32(0)), field: `key "llama.block_count"`, msg: "must be positive"},
		{name: "block_count 10^6", edit: setKV("llama.block_count", uint32(1e6)), field: `key "llama.block_count"`, msg: "1000000 layers need at least 9000000 tensors"},
		{name: "block_count 2^24", edit: setKV("llama.block_count", uint32(1<<24)), field: `key "llama.block_count"`, msg: "layers need at least"},
		{name: "block_count 2^32", edit: setKV("llama.block_count", uint64(1<<32)), field: `key "llama.block_count"`, msg: "implausibly large"},
		{name: "block_count one more names the missing layer", edit: func(_ testing.TB, s *ggufspec.Spec) {
			s.Set("llama.block_count", uint32(toInt(s.Get("llama.block_count"))+1))
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
		{name: "token_type uint32 2^31", edit: func(_ testing.TB, s *ggufspec.Spec) {
			v := make([]uint32, n)
			v[1] = 1 << 31
			s.Set("tokenizer.ggml.token_type", v)
		}, field: `key "tokenizer.ggml.token_type"`, msg: "element 1: 2147483648 does not fit in int32"},
		{name: "merges as int32", edit: setKV("tokenizer.ggml.merges", []int32{1, 2}), field: `key "tokenizer.ggml.merges"`, msg: "must be an array of strings, found an array of int32"},
		{name: "bos id = vocab size", edit: setKV("tokenizer.ggml.bos_token_id", uint32(n)), field: `key "tokenizer.ggml.bos_token_id"`, msg: fmt.Sprintf("token id %d is outside the vocabulary of %d tokens", n, n)},
		{name: "eos id 2^32-2", edit: setKV("tokenizer.ggml.eos_token_id", uint32(math.MaxUint32-1)), field: `key "tokenizer.ggml.eos_token_id"`, msg: "outside the vocabulary"},
		{name: "unknown id 2^40", edit: setKV("tokenizer.ggml.unknown_token_id", uint64(1<<40)), field: `key "tokenizer.ggml.unknown_token_id"`, msg: "outside the vocabulary"},
		{name: "eot id = vocab size", edit: setKV("tokenizer.ggml.eot_token_id", uint32(n)), field: `key "tokenizer.ggml.eot_token_id"`, msg: "outside the vocabulary"},
		{name: "bos id -1 as int32", edit: setKV("tokenizer.ggml.bos_token_id", int32(-1)), field: `key "tokenizer.ggml.bos_token_id"`, msg: "must not be negative"},
		{name: "bos id as string", edit: setKV("tokenizer.ggml.bos_token_id", "1"), field: `key "tokenizer.ggml.bos_token_id"`, msg: "must be an integer, found a string"},
		{name: "padding id 0xFFFFFFFF means none", edit: setKV("tokenizer.ggml.padding_token_id", uint32(math.MaxUint32)), ok: true},
		{name: "3-token vocabulary without a BOS key", edit: func(t testing.TB, s *ggufspec.Spec) {
			// Loads: which default BOS applies is the tokenizer's business
			// (it drops defaults that do not fit the vocabulary).
			resizeVocab(3)(t, s)
			s.Del("tokenizer.ggml.bos_token_id")
			s.Del("tokenizer.ggml.eos_token_id")
			e := toInt(s.Get("llama.embedding_length"))
			retype(t, s, "token_embd.weight", ggml.F32, uint64(e), 3)
			retype(t, s, "output.weight", ggml.F32, uint64(e), 3)
		}, ok: true},

		// Weights.
		{name: "qwen2 without its biases", edit: func(_ testing.TB, s *ggufspec.Spec) {
			for i := range s.KVs {
				if k, ok := strings.CutPrefix(s.KVs[i].Key, "llama."); ok {
					s.KVs[i].Key = "qwen2." + k
				}
			}
			s.Set("general.architecture", "qwen2")
		}, field: `tensor "blk.0.attn_q.bias"`, msg: "missing"},
		{name: "output_norm as F16", edit: func(t testing.TB, s *ggufspec.Spec) {
			retype(t, s, "output_norm.weight", ggml.F16)
		}, field: `tensor "output_norm.weight"`, msg: "vector must be F32, found F16"},
		{name: "attn_q as I8", edit: func(t testing.TB, s *ggufspec.Spec) {
			retype(t, s, "blk.0.attn_q.weight", ggml.I8)
		}, field: `tensor "blk.0.attn_q.weight"`, msg: "type I8 is not supported"},
		{name: "token_embd as F64", edit: func(t testing.TB, s *ggufspec.Spec) {
			retype(t, s, "token_embd.weight", ggml.F64)
		}, field: `tensor "token_embd.weight"`, msg: "type F64 is not supported"},
		{name: "rope_freqs valid", edit: func(t testing.TB, s *ggufspec.Spec) {
			s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: "rope_freqs.weight", Type: ggml.F32, Dims: []uint64{uint64(ropeDims(s) / 2)}, Data: f32s(ropeDims(s)/2, 1)})
		}, ok: true},
		{name: "rope_freqs zero", edit: func(t testing.TB, s *ggufspec.Spec) {
			s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: "rope_freqs.weight", Type: ggml.F32, Dims: []uint64{uint64(ropeDims(s) / 2)}, Data: f32s(ropeDims(s)/2, 0)})
		}, field: `tensor "rope_freqs.weight"`, msg: "element 0 is 0; frequency factors must be positive"},
		{name: "rope_factors_long NaN", edit: func(t testing.TB, s *ggufspec.Spec) {
			s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: "rope_factors_long.weight", Type: ggml.F32, Dims: []uint64{uint64(ropeDims(s) / 2)}, Data: f32s(ropeDims(s)/2, nan)})
		}, field: `tensor "rope_factors_long.weight"`, msg: "frequency factors must be positive"},
		{name: "expert_count 8", edit: setKV("llama.expert_count", uint32(8)), field: `key "llama.expert_count"`, msg: "llama as vkchat runs it has a dense FFN"},
		{name: "attention.value_length differs", edit: setKV("llama.attention.value_length", uint32(2)), field: `key "llama.attention.value_length"`, msg: "differs from the key length"},
		{name: "rope_freqs wrong length", edit: func(t testing.TB, s *ggufspec.Spec) {
			s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: "rope_freqs.weight", Type: ggml.F32, Dims: []uint64{3}, Data: make([]byte, 12)})
		}, field: `tensor "rope_freqs.weight"`, msg: "shape [3]"},
		{name: "rope_freqs as F16", edit: func(t testing.TB, s *ggufspec.Spec) {
			s.Tensors = append(s.Tensors, ggufspec.Tensor{Name: "rope_freqs.weight", Type: ggml.F16, Dims: []uint64{uint64(ropeDims(s) / 2)}, Data: make([]byte, 2*(ropeDims(s)/2))})
		}, field: `tensor "rope_freqs.weight"`, msg: "vector must be F32"},
	}
	// Every tensor missing, and every tensor in a wrong shape.
	for _, ts := range base.Tensors {
		name := ts.Name
		c := loadCase{name: "missing " + name, edit: func(_ testing.TB, s *ggufspec.Spec) { s.DelTensor(name) },
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
		cases = append(cases, loadCase{name: "wrong shape " + name, edit: func(t testing.TB, s *ggufspec.Spec) {
			ts := tensor(t, s, name)
			ts.Dims = reshaped(ts.Dims)
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

func ropeDims(s *ggufspec.Spec) int {
	if v := s.Get("llama.rope.dimension_count"); v != nil {
		return toInt(v)
	}
	return toInt(s.Get("llama.embedding_length")) / toInt(s.Get("llama.attention.head_count"))
}

func TestLoadHostile(t *testing.T) {
	for _, b := range baseSpecs(t) {
		for _, c := range loadCases(b.s) {
			t.Run(b.name+"/"+c.name, func(t *testing.T) {
				s := b.s.Clone()
				c.edit(t, s)
				m, err, alloc := loadMeasured(t, encode(t, s))
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

// runLoadCases loads base edited by each case: a valid one must load
// within what checkModel checks, any other must fail with a format error
// naming the case's field and message.
func runLoadCases(t *testing.T, base *ggufspec.Spec, cases []loadCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base.Clone()
			c.edit(t, s)
			m, err, _ := loadMeasured(t, encode(t, s))
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
			if !strings.Contains(msg, c.field) || !strings.Contains(msg, c.msg) {
				t.Errorf("error %q\n  want field %q and message %q", msg, c.field, c.msg)
			}
			if !errors.Is(err, gguf.ErrFormat) {
				t.Errorf("error %q does not wrap gguf.ErrFormat", msg)
			}
		})
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
		mixer := []Weight{l.Wq, l.Wk, l.Wv, l.Wo}
		if sc := l.ShortConv; sc != nil {
			mixer = []Weight{sc.InProj, sc.Conv, sc.OutProj}
		}
		if a := l.MLA; a != nil {
			mixer = []Weight{a.Q, a.KVA, a.KVANorm, a.KB, a.VB, l.Wo}
			if a.QA != nil {
				mixer = append(mixer, *a.QA, *a.QANorm)
			}
		}
		ffn := []Weight{l.Gate, l.Up, l.Down}
		if x := l.Experts; x != nil {
			ffn = []Weight{x.Router, x.Gate, x.Up, x.Down}
			if x.SelectBias != nil {
				ffn = append(ffn, *x.SelectBias)
			}
			if sh := x.Shared; sh != nil {
				ffn = append(ffn, sh.Gate, sh.Up, sh.Down)
			}
		}
		if m.Mamba2.Inner > 0 {
			// a Mamba2 hybrid's layer is its mixer, its FFN or both
			// (nemotron_h), and a ReLU² FFN has no gate matrices
			switch {
			case l.Mamba2 != nil:
				x := l.Mamba2
				mixer = []Weight{x.In, x.Conv, x.DtBias, x.A, x.D, x.Norm, x.Out}
			case l.Config.Kind == KindFFN:
				mixer = nil
			}
			if l.Experts == nil && l.Up.Data == nil && l.Config.Kind != KindFFN {
				ffn = nil
			}
			if !m.Block.Act.Gated() {
				ffn = slices.DeleteFunc(ffn, func(w Weight) bool { return w.Data == nil })
			}
		}
		for _, w := range append(mixer, ffn...) {
			check(w)
		}
		if m.Block.PreNorm {
			check(l.AttnNorm)
			if m.Mamba2.Inner == 0 || l.FFNNorm.Data != nil {
				check(l.FFNNorm)
			}
		}
		for _, w := range []*Weight{l.Bq, l.Bk, l.Bv, l.QNorm, l.KNorm, l.PostAttnNorm, l.PostFFNNorm} {
			if w != nil {
				check(*w)
			}
		}
	}
	if m.Rope.FreqFactors != nil && len(m.Rope.FreqFactors) != m.Rope.Dims/2 {
		t.Fatalf("%d rope factors for %d dims", len(m.Rope.FreqFactors), m.Rope.Dims)
	}
}

// f32s is n copies of v as little-endian F32 bytes.
func f32s(n int, v float32) []byte {
	b := make([]byte, 0, 4*n)
	for range n {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}
