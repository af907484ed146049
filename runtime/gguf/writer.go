package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"

	"vkchat/runtime/ggml"
)

// Writer builds a GGUF v3 file: metadata in insertion order, then tensors.
type Writer struct {
	Alignment uint64
	kvs       []KV
	tensors   []Tensor
	data      [][]byte
}

// NewWriter returns a writer with the default alignment.
func NewWriter() *Writer { return &Writer{Alignment: DefaultAlignment} }

// Set adds a metadata entry. Supported Go types: the scalar types of KV,
// string, and slices []string, []float32, []int32, []uint32, []uint8,
// []int64, []uint64, []float64, []bool.
func (w *Writer) Set(key string, v any) {
	for i := range w.kvs {
		if w.kvs[i].Key == key {
			w.kvs[i].Value = v
			return
		}
	}
	w.kvs = append(w.kvs, KV{Key: key, Value: v})
}

// AddTensor adds a tensor whose data is already encoded in typ's layout.
// The same limits the reader enforces apply, so a written file always reads
// back.
func (w *Writer) AddTensor(name string, typ ggml.Type, dims []uint64, data []byte) error {
	if name == "" || len(dims) == 0 || len(dims) > MaxDims {
		return fmt.Errorf("gguf writer: tensor %q: needs a name and 1..%d dims, got %v", name, MaxDims, dims)
	}
	n := uint64(1)
	for _, d := range dims {
		hi, lo := bits.Mul64(n, d)
		if d == 0 || hi != 0 || lo > math.MaxInt64 {
			return fmt.Errorf("gguf writer: tensor %q: bad dims %v", name, dims)
		}
		n = lo
	}
	rb, ok := typ.RowBytes(dims[0])
	if hi, size := bits.Mul64(rb, n/dims[0]); !ok || hi != 0 || size != uint64(len(data)) {
		return fmt.Errorf("gguf writer: tensor %q: %d bytes do not match %s dims %v", name, len(data), typ, dims)
	}
	w.tensors = append(w.tensors, Tensor{Name: name, Dims: append([]uint64(nil), dims...), Type: typ, Size: uint64(len(data))})
	w.data = append(w.data, data)
	return nil
}

// WriteFile writes the file to path.
func (w *Writer) WriteFile(path string) error {
	fd, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gguf writer: %w", err)
	}
	bw := bufio.NewWriterSize(fd, 1<<20)
	if err := w.Write(bw); err != nil {
		fd.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		fd.Close()
		return fmt.Errorf("gguf writer: %s: %w", path, err)
	}
	return fd.Close()
}

type countingWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += uint64(n)
	c.err = err
	return n, err
}

func (c *countingWriter) le(v any) { _ = binary.Write(c, binary.LittleEndian, v) }

func (c *countingWriter) str(s string) {
	c.le(uint64(len(s)))
	_, _ = io.WriteString(c, s)
}

func (c *countingWriter) pad(align uint64) {
	if r := c.n % align; r != 0 {
		_, _ = c.Write(make([]byte, align-r))
	}
}

// Write encodes the file to out.
func (w *Writer) Write(out io.Writer) error {
	// Everything that can be refused is checked before the first byte goes
	// out, so a failed Write leaves nothing half-written behind it.
	kvs, align, err := w.layout()
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(w.tensors))
	for i := range w.tensors {
		if seen[w.tensors[i].Name] {
			return fmt.Errorf("gguf writer: duplicate tensor %q", w.tensors[i].Name)
		}
		seen[w.tensors[i].Name] = true
	}
	for _, kv := range kvs {
		if kv.Key == "" {
			return fmt.Errorf("gguf writer: empty key")
		}
	}
	c := &countingWriter{w: out}
	c.le(uint32(magic))
	c.le(uint32(3))
	c.le(uint64(len(w.tensors)))
	c.le(uint64(len(kvs)))
	for _, kv := range kvs {
		c.str(kv.Key)
		if err := c.value(kv.Value); err != nil {
			return fmt.Errorf("gguf writer: key %q: %w", kv.Key, err)
		}
	}
	off := uint64(0)
	for i := range w.tensors {
		t := &w.tensors[i]
		t.Offset = off
		c.str(t.Name)
		c.le(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			c.le(d)
		}
		c.le(uint32(t.Type))
		c.le(t.Offset)
		off += t.Size
		off += (align - off%align) % align
	}
	c.pad(align)
	for i, d := range w.data {
		_, _ = c.Write(d)
		if i < len(w.data)-1 {
			c.pad(align)
		}
	}
	if c.err != nil {
		return fmt.Errorf("gguf writer: %w", c.err)
	}
	return nil
}

// layout returns the metadata to write and the alignment to lay tensors out
// with. The alignment comes from w.Alignment or a uint32 general.alignment
// set with Set, and the file always says the alignment its layout uses, so
// that what is written reads back. A general.alignment of another type is
// written as given (tests use that to make malformed files) and the layout
// then uses w.Alignment.
func (w *Writer) layout() ([]KV, uint64, error) {
	align, kvs := w.Alignment, w.kvs
	at := -1
	for i := range kvs {
		if kvs[i].Key == "general.alignment" {
			at = i
		}
	}
	if at >= 0 {
		if a, ok := kvs[at].Value.(uint32); ok {
			switch {
			case align == DefaultAlignment:
				align = uint64(a)
			case uint64(a) != align:
				return nil, 0, fmt.Errorf("gguf writer: general.alignment %d conflicts with Alignment %d", a, align)
			}
		}
	} else if align != DefaultAlignment {
		kvs = append([]KV{{Key: "general.alignment", Value: uint32(align)}}, kvs...)
	}
	if align == 0 || align&(align-1) != 0 || align > maxAlignment {
		return nil, 0, fmt.Errorf("gguf writer: alignment %d is not a power of two up to %d", align, maxAlignment)
	}
	return kvs, align, nil
}

func (c *countingWriter) value(v any) error {
	switch x := v.(type) {
	case uint8:
		c.le(uint32(TypeUint8))
		c.le(x)
	case int8:
		c.le(uint32(TypeInt8))
		c.le(x)
	case uint16:
		c.le(uint32(TypeUint16))
		c.le(x)
	case int16:
		c.le(uint32(TypeInt16))
		c.le(x)
	case uint32:
		c.le(uint32(TypeUint32))
		c.le(x)
	case int32:
		c.le(uint32(TypeInt32))
		c.le(x)
	case float32:
		c.le(uint32(TypeFloat32))
		c.le(math.Float32bits(x))
	case bool:
		c.le(uint32(TypeBool))
		c.le(x)
	case string:
		c.le(uint32(TypeString))
		c.str(x)
	case uint64:
		c.le(uint32(TypeUint64))
		c.le(x)
	case int64:
		c.le(uint32(TypeInt64))
		c.le(x)
	case float64:
		c.le(uint32(TypeFloat64))
		c.le(x)
	case []string:
		c.le(uint32(TypeArray))
		c.le(uint32(TypeString))
		c.le(uint64(len(x)))
		for _, s := range x {
			c.str(s)
		}
	case Array:
		return c.value(x.Values)
	case []float32, []int32, []uint32, []uint8, []int8, []int64, []uint64, []float64, []bool, []int16, []uint16:
		et, n := sliceType(x)
		c.le(uint32(TypeArray))
		c.le(uint32(et))
		c.le(uint64(n))
		c.le(x)
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}

func sliceType(v any) (ValueType, int) {
	switch x := v.(type) {
	case []float32:
		return TypeFloat32, len(x)
	case []int32:
		return TypeInt32, len(x)
	case []uint32:
		return TypeUint32, len(x)
	case []uint8:
		return TypeUint8, len(x)
	case []int8:
		return TypeInt8, len(x)
	case []int16:
		return TypeInt16, len(x)
	case []uint16:
		return TypeUint16, len(x)
	case []int64:
		return TypeInt64, len(x)
	case []uint64:
		return TypeUint64, len(x)
	case []float64:
		return TypeFloat64, len(x)
	case []bool:
		return TypeBool, len(x)
	}
	return 0, 0
}
