package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/runtime/ggml"
)

// minimalFile is a small valid file for the fuzzer to start from: a few keys
// of each kind and tensors of a plain, a half and a block-quantized type.
func minimalFile(t testing.TB) []byte {
	t.Helper()
	w := NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("general.alignment", uint32(32))
	w.Set("a.u8", uint8(7))
	w.Set("a.i64", int64(-3))
	w.Set("a.f", float32(0.5))
	w.Set("a.b", true)
	w.Set("a.strs", []string{"x", "", "yz"})
	w.Set("a.ints", []int32{1, -2, 3})
	for _, a := range []struct {
		name string
		typ  ggml.Type
		dims []uint64
		size int
	}{{"f32", ggml.F32, []uint64{4}, 16}, {"f16", ggml.F16, []uint64{2, 2}, 8}, {"q4", ggml.Q4_0, []uint64{32, 1}, 18}} {
		data := make([]byte, a.size)
		for i := range data {
			data[i] = byte(i*7 + 1)
		}
		if err := w.AddTensor(a.name, a.typ, a.dims, data); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := w.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fuzzSeeds are added in code as well as committed under testdata, so the
// seeds stay in step with the builders.
func fuzzSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{"valid-minimal": minimalFile(t), "valid-tiny-llama": tinyLlama(t)}
	f, err := Parse("minimal", seeds["valid-minimal"])
	if err != nil {
		t.Fatal(err)
	}
	base := rawFrom(t, f)
	pick := map[string]bool{
		"tensor count 2^63": true, "metadata count 2^63": true, "key length remaining+1": true,
		"value type 13": true, "arrays nested 4 deep": true, "array of arrays, bad element 1": true,
		"duplicate key": true, "alignment 3": true, "alignment 64 over a 32-aligned layout": true,
		"n_dims 5": true, "element count 2^63": true, "misaligned offset": true,
		"tensor starting inside another": true, "tensor infos in reverse order": true,
		"duplicate tensor name": true, "row not a multiple of the Q4_0 block": true, "tensor type 4": true,
	}
	for _, c := range hostileCases() {
		if pick[c.name] {
			name := strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
					return r
				}
				return '-'
			}, strings.ToLower(c.name))
			seeds[name] = c.build(t, base.clone())
		}
	}
	return seeds
}

// FuzzParse: Parse never panics; a rejection is a one-line *FormatError;
// an accepted file keeps every tensor inside the data, aligned and apart,
// and writing it back gives a file that reads back to the same bytes.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.gguf", data)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, ErrFormat) {
				t.Fatalf("%v (%T) is not a *FormatError", err, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r\x1b") {
				t.Fatalf("error %q is not one clean line", err)
			}
			return
		}
		checkInvariants(t, file, data)
		checkRoundTrip(t, file)
	})
}

// checkRoundTrip writes f with the Writer and reads it back: the reader and
// the writer must agree on everything the reader accepts.
func checkRoundTrip(t testing.TB, f *File) {
	t.Helper()
	enc1, ok := reencode(t, f)
	if !ok {
		return
	}
	g, err := Parse("rewritten", enc1)
	if err != nil {
		t.Fatalf("the Writer's copy of an accepted file is rejected: %v", err)
	}
	if len(g.KVs) != len(f.KVs) || len(g.Tensors) != len(f.Tensors) {
		t.Fatalf("copy has %d keys, %d tensors; want %d, %d", len(g.KVs), len(g.Tensors), len(f.KVs), len(f.Tensors))
	}
	for i := range f.Tensors {
		a, b := &f.Tensors[i], &g.Tensors[i]
		if a.Name != b.Name || a.Type != b.Type || fmt.Sprint(a.Dims) != fmt.Sprint(b.Dims) || !bytes.Equal(f.TensorData(a), g.TensorData(b)) {
			t.Fatalf("tensor %q changed in the copy", a.Name)
		}
	}
	enc2, _ := reencode(t, g)
	if !bytes.Equal(enc1, enc2) {
		t.Fatalf("writing the copy again gives different bytes")
	}
}

func reencode(t testing.TB, f *File) ([]byte, bool) {
	w := NewWriter()
	for _, kv := range f.KVs {
		if a, ok := kv.Value.(Array); ok && a.Elem == TypeArray {
			return nil, false // the Writer does not write arrays of arrays
		}
		w.Set(kv.Key, kv.Value)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, f.TensorData(ti)); err != nil {
			t.Fatalf("Writer refuses a tensor the reader accepted: %v", err)
		}
	}
	var b bytes.Buffer
	if err := w.Write(&b); err != nil {
		t.Fatalf("Writer refuses a file the reader accepted: %v", err)
	}
	return b.Bytes(), true
}

// TestWriteFuzzSeeds regenerates the committed seed corpus:
//
//	VKCHAT_WRITE_FUZZ_SEEDS=1 go test -run TestWriteFuzzSeeds ./runtime/gguf/
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("VKCHAT_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set VKCHAT_WRITE_FUZZ_SEEDS=1 to rewrite testdata/fuzz/FuzzParse")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range fuzzSeeds(t) {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, "seed-"+name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
