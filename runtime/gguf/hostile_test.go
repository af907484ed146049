package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/ggml"
)

// The hostile-file table: each case takes a valid file apart (rawFile),
// breaks one thing and checks that Parse returns a one-line *FormatError
// naming the field and the problem, without panicking and without
// allocating what the header claims. The same table runs over the tiny
// synthetic llama and over the real stories260K model.

type hostileCase struct {
	name  string
	build func(t testing.TB, r *rawFile) []byte
	field string // the error must contain this (key, tensor or header part)
	msg   string // and this (what was wrong)
	ok    bool   // odd but valid: must parse
}

// headerAllocLimit bounds what rejecting a small hostile file may allocate,
// whatever its counts and lengths claim.
const headerAllocLimit = 64 << 20

func mutate(f func(t testing.TB, r *rawFile)) func(testing.TB, *rawFile) []byte {
	return func(t testing.TB, r *rawFile) []byte {
		f(t, r)
		return r.encode()
	}
}

func bytesOf(b []byte) func(testing.TB, *rawFile) []byte {
	return func(testing.TB, *rawFile) []byte { return b }
}

func ptr(v uint64) *uint64 { return &v }

func (t *rawTensor) setDims(d ...uint64) { t.nd, t.dims = uint32(len(d)), d }

// kvOffset is where key i starts in r.encode().
func (r *rawFile) kvOffset(i int) int {
	off := 24
	for _, kv := range r.kvs[:i] {
		off += 8 + len(kv.key) + len(kv.enc)
	}
	return off
}

func (r *rawFile) kvIndex(t testing.TB, key string) int {
	for i := range r.kvs {
		if r.kvs[i].key == key {
			return i
		}
	}
	t.Fatalf("no key %q", key)
	return -1
}

// tensorInfoOffset is where tensor info i starts in r.encode().
func (r *rawFile) tensorInfoOffset(i int) int {
	off := r.kvOffset(len(r.kvs))
	for _, ti := range r.tensors[:i] {
		off += 8 + len(ti.name) + 4 + 8*len(ti.dims) + 4 + 8
	}
	return off
}

func patch64(b []byte, at int, v uint64) []byte {
	copy(b[at:], u64b(v))
	return b
}

// lengthAt encodes r and overwrites the 8-byte length or count at offset
// at (computed on r) with f(bytes that follow it).
func lengthAt(r *rawFile, at func(r *rawFile) int, f func(rest uint64) uint64) []byte {
	b := r.encode()
	pos := at(r)
	return patch64(b, pos, f(uint64(len(b)-pos-8)))
}

func keyValueAt(t testing.TB, key string, extra int) func(r *rawFile) int {
	return func(r *rawFile) int {
		i := r.kvIndex(t, key)
		return r.kvOffset(i) + 8 + len(key) + extra
	}
}

func nested(depth int, leaf []byte) []byte {
	var b bytes.Buffer
	b.Write(u32b(uint32(TypeArray)))
	for i := 0; i < depth-1; i++ {
		b.Write(u32b(uint32(TypeArray)))
		b.Write(u64b(1))
	}
	b.Write(leaf)
	return b.Bytes()
}

func hostileCases() []hostileCase {
	header := func(version uint32, nt, nkv uint64) []byte {
		return cat([]byte("GGUF"), u32b(version), u64b(nt), u64b(nkv))
	}
	const tokens = `key "tokenizer.ggml.tokens"`
	cases := []hostileCase{
		{name: "empty file", build: bytesOf(nil), field: "header", msg: "too short"},
		{name: "3 bytes", build: bytesOf([]byte("GGU")), field: "header", msg: "too short"},
		{name: "bad magic", build: mutate(func(_ testing.TB, r *rawFile) { r.magic = [4]byte{'G', 'G', 'U', 'X'} }), field: "magic", msg: "not a GGUF file"},
		{name: "legacy GGJT magic", build: mutate(func(_ testing.TB, r *rawFile) { r.magic = [4]byte{'t', 'j', 'g', 'g'} }), field: "magic", msg: "pre-GGUF GGJT"},
		{name: "magic only", build: bytesOf([]byte("GGUF")), field: "version", msg: "needs 4 bytes"},
		{name: "version 0", build: mutate(func(_ testing.TB, r *rawFile) { r.version = 0 }), field: "version", msg: "unsupported GGUF version 0"},
		{name: "version 1", build: mutate(func(_ testing.TB, r *rawFile) { r.version = 1 }), field: "version", msg: "unsupported GGUF version 1"},
		{name: "version 4", build: mutate(func(_ testing.TB, r *rawFile) { r.version = 4 }), field: "version", msg: "unsupported GGUF version 4"},
		{name: "big-endian version 3", build: mutate(func(_ testing.TB, r *rawFile) { r.version = 3 << 24 }), field: "version", msg: "big-endian"},
		{name: "counts truncated", build: bytesOf(cat([]byte("GGUF"), u32b(3), u32b(0))), field: "tensor count", msg: "needs 8 bytes"},
		{name: "tensor count 2^63", build: mutate(func(_ testing.TB, r *rawFile) { r.nTensors = ptr(1 << 63) }), field: "tensor count", msg: "cannot fit"},
		{name: "tensor count 2^64-1", build: mutate(func(_ testing.TB, r *rawFile) { r.nTensors = ptr(math.MaxUint64) }), field: "tensor count", msg: "cannot fit"},
		{name: "tensor count 2^63 header only", build: bytesOf(header(3, 1<<63, 0)), field: "tensor count", msg: "cannot fit"},
		{name: "metadata count 2^63", build: mutate(func(_ testing.TB, r *rawFile) { r.nKV = ptr(1 << 63) }), field: "metadata count", msg: "cannot fit"},
		{name: "metadata count 2^64-1 header only", build: bytesOf(header(3, 0, math.MaxUint64)), field: "metadata count", msg: "cannot fit"},
		{name: "metadata count one too many", build: mutate(func(_ testing.TB, r *rawFile) { r.nKV = ptr(uint64(len(r.kvs) + 1)) })},
		{name: "tensor count one too many", build: mutate(func(_ testing.TB, r *rawFile) { r.nTensors = ptr(uint64(len(r.tensors) + 1)) })},

		// Keys and values.
		{name: "key length 2^64-1", build: func(_ testing.TB, r *rawFile) []byte { return patch64(r.encode(), 24, math.MaxUint64) },
			field: "metadata entry 0 key", msg: "string length 18446744073709551615 exceeds"},
		{name: "key length remaining+1", build: func(_ testing.TB, r *rawFile) []byte {
			return lengthAt(r, func(*rawFile) int { return 24 }, func(rest uint64) uint64 { return rest + 1 })
		}, field: "metadata entry 0 key", msg: "exceeds"},
		{name: "key length 0", build: func(_ testing.TB, r *rawFile) []byte { return patch64(r.encode(), 24, 0) },
			field: "metadata entry 0 key", msg: "is empty"},
		{name: "string length 2^64-1", build: func(t testing.TB, r *rawFile) []byte {
			return lengthAt(r, keyValueAt(t, "general.name", 4), func(uint64) uint64 { return math.MaxUint64 })
		}, field: `key "general.name"`, msg: "string length 18446744073709551615"},
		{name: "string length remaining+1", build: func(t testing.TB, r *rawFile) []byte {
			return lengthAt(r, keyValueAt(t, "general.name", 4), func(rest uint64) uint64 { return rest + 1 })
		}, field: `key "general.name"`, msg: "exceeds"},
		{name: "0-length string value", build: mutate(func(t testing.TB, r *rawFile) { r.set("general.name", enc(t, "")) }), ok: true},
		{name: "value type 13", build: mutate(func(t testing.TB, r *rawFile) { r.set("general.name", cat(u32b(13), strb("x"))) }),
			field: `key "general.name"`, msg: "unknown value type 13"},
		{name: "value type 0xFFFFFFFF", build: mutate(func(t testing.TB, r *rawFile) { r.set("general.name", cat(u32b(math.MaxUint32), strb("x"))) }),
			field: `key "general.name"`, msg: "unknown value type 4294967295"},
		{name: "array element type 13", build: mutate(func(t testing.TB, r *rawFile) {
			r.set("x.arr", cat(u32b(uint32(TypeArray)), u32b(13), u64b(1), u32b(0)))
		}), field: `key "x.arr"`, msg: "unknown array element type 13"},
		{name: "array element type 0xFFFFFFFF", build: mutate(func(t testing.TB, r *rawFile) {
			r.set("x.arr", cat(u32b(uint32(TypeArray)), u32b(math.MaxUint32), u64b(1), u32b(0)))
		}), field: `key "x.arr"`, msg: "unknown array element type 4294967295"},
		{name: "uint32 array count 2^63", build: mutate(func(t testing.TB, r *rawFile) {
			r.set("x.arr", cat(u32b(uint32(TypeArray)), u32b(uint32(TypeUint32)), u64b(1<<63), u32b(0)))
		}), field: `key "x.arr"`, msg: "array of 9223372036854775808 uint32 elements cannot fit"},
		{name: "string array count 2^64-1", build: func(t testing.TB, r *rawFile) []byte {
			return lengthAt(r, keyValueAt(t, "tokenizer.ggml.tokens", 8), func(uint64) uint64 { return math.MaxUint64 })
		}, field: tokens, msg: "cannot fit"},
		{name: "string array count remaining/8+1", build: func(t testing.TB, r *rawFile) []byte {
			return lengthAt(r, keyValueAt(t, "tokenizer.ggml.tokens", 8), func(rest uint64) uint64 { return rest/8 + 1 })
		}, field: tokens, msg: "cannot fit"},
		{name: "string array count too large but fits", build: func(t testing.TB, r *rawFile) []byte {
			// A count that passes the size bound: the strings run into the
			// following keys and tensor infos and fail somewhere in there.
			return lengthAt(r, keyValueAt(t, "tokenizer.ggml.tokens", 8), func(rest uint64) uint64 { return rest / 8 })
		}},
		{name: "string element length 2^64-1", build: func(t testing.TB, r *rawFile) []byte {
			// tokens[0..3] are "<unk>", "<s>", "</s>" and one more in both bases.
			return lengthAt(r, keyValueAt(t, "tokenizer.ggml.tokens", 16+8+5+8+3+8+4), func(uint64) uint64 { return math.MaxUint64 })
		}, field: tokens + "[3]", msg: "string length 18446744073709551615"},
		{name: "0-length token", build: mutate(func(t testing.TB, r *rawFile) {
			r.set("x.strs", enc(t, []string{"a", "", "b"}))
		}), ok: true},
		{name: "arrays nested 1000 deep", build: mutate(func(t testing.TB, r *rawFile) {
			r.set("x.nested", nested(1000, cat(u32b(0), u64b(0))))
		}), field: `key "x.nested"[0][0][0]`, msg: "nested deeper than 4"},
		{name: "arrays nested 4 deep", build: mutate(func(t testing.TB, r *rawFile) {
			r.set("x.nested", nested(4, cat(u32b(0), u64b(0))))
		}), ok: true},
		{name: "array of arrays count 2^63", build: mutate(func(t testing.TB, r *rawFile) {
			r.set("x.nested", cat(u32b(uint32(TypeArray)), u32b(uint32(TypeArray)), u64b(1<<63)))
		}), field: `key "x.nested"`, msg: "cannot fit"},
		{name: "array of arrays, bad element 1", build: mutate(func(t testing.TB, r *rawFile) {
			r.set("x.nested", cat(u32b(uint32(TypeArray)), u32b(uint32(TypeArray)), u64b(2),
				u32b(0), u64b(0), u32b(77), u64b(0)))
		}), field: `key "x.nested"[1]`, msg: "unknown array element type 77"},
		{name: "duplicate key", build: mutate(func(t testing.TB, r *rawFile) {
			r.kvs = append(r.kvs, rawKV{"general.architecture", enc(t, "llama")})
		}), field: `key "general.architecture"`, msg: "duplicate key"},
		{name: "control bytes in a duplicate key", build: mutate(func(t testing.TB, r *rawFile) {
			k := "x.\x1b]52;c;aGk=\x07"
			r.kvs = append(r.kvs, rawKV{k, enc(t, "a")}, rawKV{k, enc(t, "b")})
		}), field: `key "x.\x1b]52;c;aGk=\a"`, msg: "duplicate key"},

		// Alignment.
		{name: "alignment 0", build: mutate(func(t testing.TB, r *rawFile) { r.set("general.alignment", enc(t, uint32(0))) }),
			field: `key "general.alignment"`, msg: "0 is not a power of two"},
		{name: "alignment 3", build: mutate(func(t testing.TB, r *rawFile) { r.set("general.alignment", enc(t, uint32(3))) }),
			field: `key "general.alignment"`, msg: "3 is not a power of two"},
		{name: "alignment 2^31", build: mutate(func(t testing.TB, r *rawFile) { r.set("general.alignment", enc(t, uint32(1<<31))) }),
			field: `key "general.alignment"`, msg: "exceeds"},
		{name: "alignment as uint64", build: mutate(func(t testing.TB, r *rawFile) { r.set("general.alignment", enc(t, uint64(32))) }),
			field: `key "general.alignment"`, msg: "must be uint32, found uint64"},
		{name: "alignment as string", build: mutate(func(t testing.TB, r *rawFile) { r.set("general.alignment", enc(t, "32")) }),
			field: `key "general.alignment"`, msg: "must be uint32, found a string"},
		{name: "alignment 64 over a 32-aligned layout", build: mutate(func(t testing.TB, r *rawFile) {
			// The header is padded to 32 and the offsets are multiples of 32:
			// the data section moves and tensors misalign or run off the end.
			r.set("general.alignment", enc(t, uint32(64)))
			if h := uint64(r.tensorInfoOffset(len(r.tensors))); (h+31)/32*32%64 == 0 {
				r.set("x.pad", enc(t, "1234567")) // 32 more bytes of header
			}
		}), field: `tensor "`},

		// Tensor infos.
		{name: "tensor name length 2^64-1", build: func(_ testing.TB, r *rawFile) []byte {
			return patch64(r.encode(), r.tensorInfoOffset(0), math.MaxUint64)
		}, field: "tensor 0 name", msg: "string length 18446744073709551615"},
		{name: "tensor name length remaining+1", build: func(_ testing.TB, r *rawFile) []byte {
			return lengthAt(r, func(r *rawFile) int { return r.tensorInfoOffset(0) }, func(rest uint64) uint64 { return rest + 1 })
		}, field: "tensor 0 name", msg: "exceeds"},
		{name: "tensor name empty", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].name = "" }), field: "tensor 0 name", msg: "is empty"},
		{name: "n_dims 0", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].nd, r.tensors[0].dims = 0, nil }),
			field: `tensor "token_embd.weight"`, msg: "n_dims 0 is outside 1..4"},
		{name: "n_dims 5", build: mutate(func(_ testing.TB, r *rawFile) {
			r.tensors[0].nd, r.tensors[0].dims = 5, append(r.tensors[0].dims, 1, 1, 1)
		}), field: `tensor "token_embd.weight"`, msg: "n_dims 5 is outside 1..4"},
		{name: "n_dims 2^32-1", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].nd = math.MaxUint32 }),
			field: `tensor "token_embd.weight"`, msg: "n_dims 4294967295 is outside 1..4"},
		{name: "dimension zero", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].dims[1] = 0 }),
			field: `tensor "token_embd.weight"`, msg: "dimension 1 is zero"},
		{name: "element count 2^64", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].setDims(1<<32, 1<<32) }),
			field: `tensor "token_embd.weight"`, msg: "element count overflows"},
		{name: "element count 2^63", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].setDims(1<<62, 2) }),
			field: `tensor "token_embd.weight"`, msg: "element count overflows"},
		{name: "F32 bytes 2^64", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].setDims(1<<61, 2) }),
			field: `tensor "token_embd.weight"`, msg: "byte size overflows"},
		{name: "F16 bytes 2^63", build: mutate(func(_ testing.TB, r *rawFile) {
			r.tensors[0].typ = uint32(ggml.F16)
			r.tensors[0].setDims(1 << 62)
		}), field: `tensor "token_embd.weight"`, msg: "byte size overflows"},
		{name: "Q8_0 bytes near 2^63", build: mutate(func(_ testing.TB, r *rawFile) {
			r.tensors[0].typ = uint32(ggml.Q8_0)
			r.tensors[0].setDims(1 << 62)
		}), field: `tensor "token_embd.weight"`, msg: "runs past the end"},
		{name: "F32 2^40 elements", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].setDims(1 << 40) }),
			field: `tensor "token_embd.weight"`, msg: "runs past the end"},
		{name: "type 4 (removed)", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].typ = 4 }),
			field: `tensor "token_embd.weight"`, msg: "tensor type 4 (Q4_2) was removed from ggml"},
		{name: "type 5 (removed)", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].typ = 5 }),
			field: `tensor "token_embd.weight"`, msg: "tensor type 5 (Q4_3) was removed from ggml"},
		{name: "row not a multiple of the Q4_0 block", build: mutate(func(_ testing.TB, r *rawFile) {
			r.tensors[0].typ = uint32(ggml.Q4_0)
			r.tensors[0].setDims(48, 2)
		}), field: `tensor "token_embd.weight"`, msg: "row length 48 is not a multiple of the Q4_0 block size 32"},
		{name: "row not a multiple of the Q4_K block", build: mutate(func(_ testing.TB, r *rawFile) {
			r.tensors[0].typ = uint32(ggml.Q4_K)
			r.tensors[0].setDims(64, 2)
		}), field: `tensor "token_embd.weight"`, msg: "row length 64 is not a multiple of the Q4_K block size 256"},
		{name: "offset at the end of the data", build: mutate(func(_ testing.TB, r *rawFile) {
			last := &r.tensors[len(r.tensors)-1]
			last.offset = (uint64(len(r.data)) + r.align - 1) / r.align * r.align
		}), field: `tensor "`, msg: "runs past the end"},
		{name: "offset 2^64-32", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].offset = math.MaxUint64 - 31 }),
			field: `tensor "token_embd.weight"`, msg: "runs past the end"},
		{name: "misaligned offset", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[1].offset += 4 }),
			field: `tensor "output_norm.weight"`, msg: "not a multiple of the alignment 32"},
		{name: "two tensors at one offset", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[2].offset = r.tensors[0].offset }),
			field: `tensor "`, msg: "overlaps tensor"},
		{name: "tensor starting inside another", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[1].offset = r.tensors[0].offset + 32 }),
			field: `tensor "output_norm.weight"`, msg: `overlaps tensor "token_embd.weight"`},
		{name: "tensor infos in reverse order", build: mutate(func(_ testing.TB, r *rawFile) {
			for i, j := 0, len(r.tensors)-1; i < j; i, j = i+1, j-1 {
				r.tensors[i], r.tensors[j] = r.tensors[j], r.tensors[i]
			}
		}), ok: true},
		{name: "duplicate tensor name", build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[2].name = r.tensors[1].name }),
			field: `tensor "output_norm.weight"`, msg: "duplicate tensor name"},
		{name: "control bytes in a tensor name", build: mutate(func(_ testing.TB, r *rawFile) {
			r.tensors[0].name, r.tensors[0].typ = "\x1b]52;c;aGk=\x07\x1bc", 200
		}), field: `tensor "\x1b]52;c;aGk=\a\x1bc"`, msg: "unknown tensor type 200"},
		{name: "truncated right after the tensor infos", build: func(_ testing.TB, r *rawFile) []byte {
			b := r.encode()
			return b[:r.tensorInfoOffset(len(r.tensors))]
		}, field: "tensor"},
	}
	// Every type id the table does not know.
	for id := 0; id < 256; id++ {
		if ggml.Type(id).Known() {
			continue
		}
		msg := fmt.Sprintf("unknown tensor type %d", id)
		if _, ok := knownIDs[uint32(id)]; ok {
			msg = fmt.Sprintf("tensor type %d (%s) ", id, knownIDs[uint32(id)].name)
		}
		cases = append(cases, hostileCase{name: fmt.Sprintf("tensor type %d", id),
			build: mutate(func(_ testing.TB, r *rawFile) { r.tensors[0].typ = uint32(id) }),
			field: `tensor "token_embd.weight"`, msg: msg})
	}
	return cases
}

// checkRejected asserts err is a one-line format error naming field and msg.
func checkRejected(t testing.TB, err error, field, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want an error naming %q", field)
	}
	var fe *FormatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrFormat) {
		t.Fatalf("error %v (%T) is not a *FormatError wrapping ErrFormat", err, err)
	}
	s := err.Error()
	if fe.Field == "" {
		t.Errorf("error %q names no field", s)
	}
	if strings.ContainsAny(s, "\n\r\x1b\x07") {
		t.Errorf("error %q is not one clean line", s)
	}
	if !strings.Contains(s, field) || !strings.Contains(s, msg) {
		t.Errorf("error %q\n  want field %q and message %q", s, field, msg)
	}
}

// parseMeasured parses b, failing on a panic, and reports the bytes allocated.
func parseMeasured(t testing.TB, b []byte) (f *File, err error, alloc uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Parse panicked: %v", p)
			}
		}()
		f, err = Parse("hostile.gguf", b)
	}()
	runtime.ReadMemStats(&after)
	return f, err, after.TotalAlloc - before.TotalAlloc
}

func bases(t *testing.T) map[string]*File {
	t.Helper()
	out := map[string]*File{}
	f, err := Parse("tiny.gguf", tinyLlama(t))
	if err != nil {
		t.Fatal(err)
	}
	out["tiny"] = f
	if p := testenv.Fixture(filepath.Join("models", "stories260K.gguf")); p != "" {
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		out["stories260K"] = f
	} else {
		t.Log("stories260K.gguf not found: running the table over the tiny model only")
	}
	return out
}

func TestHostile(t *testing.T) {
	for bname, base := range bases(t) {
		raw := rawFrom(t, base)
		for _, c := range hostileCases() {
			t.Run(bname+"/"+c.name, func(t *testing.T) {
				b := c.build(t, raw.clone())
				f, err, alloc := parseMeasured(t, b)
				if alloc > headerAllocLimit {
					t.Errorf("allocated %d bytes for a %d-byte file", alloc, len(b))
				}
				if c.ok {
					if err != nil {
						t.Fatalf("valid file rejected: %v", err)
					}
					checkInvariants(t, f, b)
					return
				}
				checkRejected(t, err, c.field, c.msg)
				t.Logf("%s (%d bytes, %d allocated)", err, len(b), alloc)
			})
		}
	}
}

// TestTruncated cuts each base file at every header byte and at every tensor
// boundary ±1: each cut must be an error, and one in the data section must
// name the first tensor that no longer fits.
func TestTruncated(t *testing.T) {
	for bname, base := range bases(t) {
		data := base.data
		cuts := map[uint64]bool{}
		for n := uint64(0); n <= base.DataOffset; n++ {
			cuts[n] = true
		}
		for _, ti := range base.Tensors {
			for _, b := range []uint64{ti.Offset, ti.Offset + ti.Size} {
				for _, d := range []int64{-1, 0, 1} {
					cuts[base.DataOffset+uint64(int64(b)+d)] = true
				}
			}
		}
		n := 0
		for cut := range cuts {
			if cut >= uint64(len(data)) {
				continue
			}
			n++
			_, err, alloc := parseMeasured(t, data[:cut])
			if alloc > headerAllocLimit {
				t.Errorf("%s cut at %d: allocated %d bytes", bname, cut, alloc)
			}
			want := ""
			if cut > base.DataOffset {
				for _, ti := range base.Tensors {
					if base.DataOffset+ti.Offset+ti.Size > cut {
						want = fmt.Sprintf("tensor %q", ti.Name)
						break
					}
				}
			}
			if err == nil {
				t.Errorf("%s cut at %d of %d: accepted", bname, cut, len(data))
				continue
			}
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Field == "" || !strings.Contains(err.Error(), want) {
				t.Errorf("%s cut at %d: %v; want a format error naming %q", bname, cut, err, want)
			}
		}
		t.Logf("%s: %d truncations rejected", bname, n)
	}
}

// TestHostileLargeFileMemory gives the reader a 64 MiB file whose header
// claims as much as the size bounds let through and then turns bad at the
// first or last entry: what the claims would reserve is hundreds of MiB;
// nothing may be reserved before the entries are really read.
func TestHostileLargeFileMemory(t *testing.T) {
	const size = 64 << 20
	pad := func(b []byte) []byte { return append(b, make([]byte, size-len(b))...) }
	hdr := func(nt, nkv uint64) []byte { return cat([]byte("GGUF"), u32b(3), u64b(nt), u64b(nkv)) }
	arrayAt := len(cat(hdr(0, 1), strb("tokenizer.ggml.tokens"))) + 16
	cases := []struct {
		name  string
		data  []byte
		field string
	}{
		{"1M keys, the second empty", pad(cat(hdr(0, maxKVs), strb("a"), enc(t, uint8(1)))), "metadata entry 1 key"},
		{"1M tensors, the second unnamed", pad(cat(hdr(maxTensors, 0), strb("t"), u32b(1), u64b(1), u32b(0), u64b(0))), "tensor 1 name"},
		{"8M strings, the last too long", func() []byte {
			n := uint64(size-arrayAt) / 8
			b := pad(cat(hdr(0, 1), strb("tokenizer.ggml.tokens"), u32b(uint32(TypeArray)), u32b(uint32(TypeString)), u64b(n)))
			return patch64(b, arrayAt+int(n-1)*8, math.MaxUint64)
		}(), `key "tokenizer.ggml.tokens"[`},
		{"5M nested arrays, the last with a bad type", func() []byte {
			n := uint64(size-arrayAt) / 12
			b := pad(cat(hdr(0, 1), strb("tokenizer.ggml.tokens"), u32b(uint32(TypeArray)), u32b(uint32(TypeArray)), u64b(n)))
			copy(b[arrayAt+int(n-1)*12:], u32b(99))
			return b
		}(), `key "tokenizer.ggml.tokens"[`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err, alloc := parseMeasured(t, c.data)
			checkRejected(t, err, c.field, "")
			t.Logf("%v: %d bytes allocated", err, alloc)
			if alloc > 16<<20 {
				t.Errorf("allocated %d MiB rejecting a %d MiB file", alloc>>20, len(c.data)>>20)
			}
		})
	}
}

// checkInvariants is what any accepted file must satisfy; the fuzzer checks
// the same.
func checkInvariants(t testing.TB, f *File, data []byte) {
	t.Helper()
	if f.DataOffset%f.Alignment != 0 {
		t.Fatalf("data offset %d not aligned to %d", f.DataOffset, f.Alignment)
	}
	type span struct{ lo, hi uint64 }
	var spans []span
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if !ti.Type.Known() || len(ti.Dims) == 0 || len(ti.Dims) > MaxDims {
			t.Fatalf("tensor %q: type %v dims %v accepted", ti.Name, ti.Type, ti.Dims)
		}
		rb, ok := ti.Type.RowBytes(ti.Dims[0])
		if !ok || rb*ti.Rows() != ti.Size {
			t.Fatalf("tensor %q: size %d does not match %v %v", ti.Name, ti.Size, ti.Type, ti.Dims)
		}
		end := f.DataOffset + ti.Offset + ti.Size
		if ti.Offset%f.Alignment != 0 || end > uint64(len(data)) || end < f.DataOffset {
			t.Fatalf("tensor %q [%d,+%d) outside the %d-byte file", ti.Name, ti.Offset, ti.Size, len(data))
		}
		if d := f.TensorData(ti); uint64(len(d)) != ti.Size {
			t.Fatalf("tensor %q: TensorData gave %d bytes, want %d", ti.Name, len(d), ti.Size)
		}
		if got, ok := f.Tensor(ti.Name); !ok || got != ti {
			t.Fatalf("tensor %q: lookup failed", ti.Name)
		}
		spans = append(spans, span{ti.Offset, ti.Offset + ti.Size})
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].lo < spans[b].lo })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			t.Fatalf("tensor data [%d,%d) overlaps [%d,%d)", spans[i].lo, spans[i].hi, spans[i-1].lo, spans[i-1].hi)
		}
	}
	for _, kv := range f.KVs {
		// The typed accessors must never panic, whatever the value.
		f.String(kv.Key)
		f.Uint(kv.Key)
		f.Float(kv.Key)
		f.Bool(kv.Key)
		f.Array(kv.Key)
		f.Strings(kv.Key)
		f.Float32s(kv.Key)
		f.Int32s(kv.Key)
		if v, ok := f.Get(kv.Key); !ok || fmt.Sprintf("%T", v) != fmt.Sprintf("%T", kv.Value) {
			t.Fatalf("key %q: lookup failed", kv.Key)
		}
	}
}
