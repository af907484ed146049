package gguf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"vkchat/runtime/ggml"
)

// Open on things that are not model files: each is an error, never a hang
// (a FIFO would block a plain read) or a panic.
func TestOpenSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gguf")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.gguf")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct{ path, want string }{
		{empty, "header: file is empty"},
		{dir, "is a directory"},
		{fifo, "not a regular file"},
		{filepath.Join(dir, "absent.gguf"), "no such file"},
	} {
		f, err := Open(c.path)
		if err == nil {
			f.Close()
			t.Errorf("%s: opened", c.path)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
}

func TestOpenCloseTensorData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := os.WriteFile(path, tinyLlama(t), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := f.Tensor("output.weight")
	if d := f.TensorData(ti); len(d) != int(ti.Size) {
		t.Fatalf("%d bytes, want %d", len(d), ti.Size)
	}
	bogus := Tensor{Name: "bogus", Offset: 1 << 62, Size: 1 << 62}
	if d := f.TensorData(&bogus); d != nil {
		t.Fatal("TensorData of a tensor outside the file returned data")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if d := f.TensorData(ti); d != nil {
		t.Fatal("TensorData after Close returned data")
	}
}

// A path with a newline or escape must not break the one-line error.
func TestFormatErrorOneLine(t *testing.T) {
	_, err := Parse("evil\n\x1b[2Jname.gguf", []byte("GGUX"))
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatal(err)
	}
	s := err.Error()
	if strings.ContainsAny(s, "\n\x1b") || !strings.Contains(s, `"evil\n\x1b[2Jname.gguf"`) {
		t.Fatalf("%q", s)
	}
	e := &FormatError{Path: "p", Field: "key \"a\x00\"", Msg: "bad \x9b\xff\u2028"}
	if got, want := e.Error(), `p: key "a\x00": bad \x9b\xff\u2028`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// What the Writer accepts reads back; what it cannot write consistently it
// refuses up front instead of panicking or writing a file the reader rejects.
func TestWriterRefusesWhatCannotReadBack(t *testing.T) {
	write := func(w *Writer) error { return w.Write(&bytes.Buffer{}) }
	w := NewWriter()
	w.Alignment = 0
	if err := write(w); err == nil {
		t.Error("alignment 0 accepted")
	}
	w = NewWriter()
	w.Alignment = 48
	if err := write(w); err == nil {
		t.Error("alignment 48 accepted")
	}
	w = NewWriter()
	w.Alignment = 64
	w.Set("general.alignment", uint32(128))
	if err := write(w); err == nil {
		t.Error("conflicting alignments accepted")
	}
	w = NewWriter()
	w.Set("", "x")
	if err := write(w); err == nil {
		t.Error("empty key accepted")
	}
	w = NewWriter()
	for _, dims := range [][]uint64{nil, {}, {0}, {1, 1, 1, 1, 1}, {1 << 32, 1 << 32}} {
		if err := w.AddTensor("t", ggml.F32, dims, nil); err == nil {
			t.Errorf("dims %v accepted", dims)
		}
	}
	if err := w.AddTensor("", ggml.F32, []uint64{1}, make([]byte, 4)); err == nil {
		t.Error("empty tensor name accepted")
	}
	w.AddTensor("t", ggml.F32, []uint64{1}, make([]byte, 4))
	w.AddTensor("t", ggml.F32, []uint64{1}, make([]byte, 4))
	if err := write(w); err == nil {
		t.Error("duplicate tensor accepted")
	}
}

func TestWriterAlignmentFromKey(t *testing.T) {
	w := NewWriter()
	w.Set("general.alignment", uint32(64))
	w.AddTensor("a", ggml.F32, []uint64{3}, make([]byte, 12))
	w.AddTensor("b", ggml.F32, []uint64{5}, make([]byte, 20))
	var b bytes.Buffer
	if err := w.Write(&b); err != nil {
		t.Fatal(err)
	}
	f, err := Parse("aligned", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Alignment != 64 || f.DataOffset%64 != 0 || f.Tensors[1].Offset != 64 {
		t.Fatalf("alignment %d, data at %d, b at %d", f.Alignment, f.DataOffset, f.Tensors[1].Offset)
	}
}
