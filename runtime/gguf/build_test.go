package gguf

import (
	"bytes"
	"encoding/binary"
	"testing"

	"vkchat/internal/ggufspec"
)

// This file holds the test builders: a tiny but complete llama written with
// the real Writer, and rawFile, a field-by-field encoder that can write
// anything, including what the Writer refuses (lying counts and lengths,
// bad type tags, misplaced offsets).

// tinyLlama is ggufspec.Tiny, the tiny llama the models and cmd tests also
// start from, written with this package's Writer.
func tinyLlama(t testing.TB) []byte {
	t.Helper()
	b, err := ggufspec.Tiny().Encode(NewWriter())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type rawKV struct {
	key string
	enc []byte // type tag followed by the value, exactly as in the file
}

type rawTensor struct {
	name   string
	nd     uint32 // written as n_dims; normally len(dims)
	dims   []uint64
	typ    uint32
	offset uint64
}

// rawFile encodes a GGUF file field by field with no checks at all.
type rawFile struct {
	magic    [4]byte
	version  uint32
	nTensors *uint64 // count to write; nil: len(tensors)
	nKV      *uint64 // count to write; nil: len(kvs)
	kvs      []rawKV
	tensors  []rawTensor
	align    uint64 // pad the header to this before data; 0: no padding
	data     []byte
}

func u32b(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64b(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func cat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}
func strb(s string) []byte { return cat(u64b(uint64(len(s))), []byte(s)) }

// enc encodes a Go value with its type tag, the way the Writer does.
func enc(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	c := &countingWriter{w: &b}
	if err := c.value(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func (r *rawFile) encode() []byte {
	var b bytes.Buffer
	b.Write(r.magic[:])
	b.Write(u32b(r.version))
	nt, nk := uint64(len(r.tensors)), uint64(len(r.kvs))
	if r.nTensors != nil {
		nt = *r.nTensors
	}
	if r.nKV != nil {
		nk = *r.nKV
	}
	b.Write(u64b(nt))
	b.Write(u64b(nk))
	for _, kv := range r.kvs {
		b.Write(strb(kv.key))
		b.Write(kv.enc)
	}
	for _, t := range r.tensors {
		b.Write(strb(t.name))
		b.Write(u32b(t.nd))
		for _, d := range t.dims {
			b.Write(u64b(d))
		}
		b.Write(u32b(t.typ))
		b.Write(u64b(t.offset))
	}
	if r.align > 0 {
		if p := uint64(b.Len()) % r.align; p != 0 {
			b.Write(make([]byte, r.align-p))
		}
	}
	b.Write(r.data)
	return b.Bytes()
}

// rawFrom decomposes a parsed file so that a test can change one field and
// encode it again.
func rawFrom(t testing.TB, f *File) *rawFile {
	t.Helper()
	r := &rawFile{magic: [4]byte{'G', 'G', 'U', 'F'}, version: f.Version, align: f.Alignment,
		data: append([]byte(nil), f.data[f.DataOffset:]...)}
	for _, kv := range f.KVs {
		r.kvs = append(r.kvs, rawKV{kv.Key, enc(t, kv.Value)})
	}
	for _, ti := range f.Tensors {
		r.tensors = append(r.tensors, rawTensor{ti.Name, uint32(len(ti.Dims)), append([]uint64(nil), ti.Dims...), uint32(ti.Type), ti.Offset})
	}
	return r
}

func (r *rawFile) clone() *rawFile {
	c := *r
	c.kvs = append([]rawKV(nil), r.kvs...)
	c.tensors = make([]rawTensor, len(r.tensors))
	for i, t := range r.tensors {
		t.dims = append([]uint64(nil), t.dims...)
		c.tensors[i] = t
	}
	return &c
}

func (r *rawFile) kv(t testing.TB, key string) *rawKV {
	for i := range r.kvs {
		if r.kvs[i].key == key {
			return &r.kvs[i]
		}
	}
	t.Fatalf("no key %q", key)
	return nil
}

func (r *rawFile) tensor(t testing.TB, name string) *rawTensor {
	for i := range r.tensors {
		if r.tensors[i].name == name {
			return &r.tensors[i]
		}
	}
	t.Fatalf("no tensor %q", name)
	return nil
}

// set replaces or appends a key with an already encoded value.
func (r *rawFile) set(key string, enc []byte) {
	for i := range r.kvs {
		if r.kvs[i].key == key {
			r.kvs[i].enc = enc
			return
		}
	}
	r.kvs = append(r.kvs, rawKV{key, enc})
}

func TestRawRoundTrip(t *testing.T) {
	data := tinyLlama(t)
	f, err := Parse("tiny.gguf", data)
	if err != nil {
		t.Fatal(err)
	}
	if got := rawFrom(t, f).encode(); !bytes.Equal(got, data) {
		t.Fatalf("raw re-encoding differs from the Writer's output (%d vs %d bytes)", len(got), len(data))
	}
}
