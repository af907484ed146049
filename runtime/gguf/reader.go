// Package gguf reads and writes GGUF model files (versions 2 and 3).
//
// A file is memory-mapped; tensor data is never copied into the Go heap.
// Every count, length, dimension and offset read from the file is checked
// against the bytes that remain before anything is allocated, so a hostile
// header cannot make the reader allocate more than the file's own size.
package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"os"
	"sort"
	"syscall"

	"vkchat/runtime/ggml"
)

const (
	magic            = 0x46554747 // "GGUF" little-endian
	DefaultAlignment = 32
	// MaxDims is ggml's GGML_MAX_DIMS; a file claiming more is malformed.
	MaxDims = 4
	// maxArrayDepth bounds nesting of arrays of arrays: no real model uses
	// more than one level, and unbounded recursion is a denial of service.
	maxArrayDepth = 4
)

// Tensor describes one tensor. Dims[0] is the row length (ggml's ne0).
type Tensor struct {
	Name   string
	Dims   []uint64
	Type   ggml.Type
	Offset uint64 // relative to the start of the data section
	Size   uint64 // bytes
}

// Elements is the product of the dimensions.
func (t *Tensor) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Rows is the number of rows of length Dims[0].
func (t *Tensor) Rows() uint64 {
	if len(t.Dims) == 0 || t.Dims[0] == 0 {
		return 0
	}
	return t.Elements() / t.Dims[0]
}

// File is an open GGUF file.
type File struct {
	Path       string
	Version    uint32
	Alignment  uint64
	DataOffset uint64 // absolute offset of the tensor data section
	KVs        []KV
	Tensors    []Tensor

	kvIndex     map[string]int
	tensorIndex map[string]int
	data        []byte // the whole mapped file
	mapped      bool
}

// Open maps and parses path. The returned file must be closed.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open model: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a GGUF file", path)
	}
	size := st.Size()
	if size == 0 {
		return nil, &FormatError{path, "header", "file is empty"}
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s: file of %d bytes is too large to map", path, size)
	}
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	f, err := parse(path, data)
	if err != nil {
		_ = syscall.Munmap(data)
		return nil, err
	}
	f.mapped = true
	return f, nil
}

// Parse reads a GGUF image held in memory (used by tests and fuzzing).
func Parse(name string, data []byte) (*File, error) { return parse(name, data) }

// Close unmaps the file. Tensor data slices become invalid.
func (f *File) Close() error {
	if f == nil || f.data == nil {
		return nil
	}
	var err error
	if f.mapped {
		err = syscall.Munmap(f.data)
	}
	f.data = nil
	return err
}

// Size is the file's size in bytes.
func (f *File) Size() uint64 { return uint64(len(f.data)) }

// TensorData returns the bytes of t, a view into the mapped file.
func (f *File) TensorData(t *Tensor) []byte {
	start := f.DataOffset + t.Offset
	return f.data[start : start+t.Size : start+t.Size]
}

// Tensor looks a tensor up by name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.tensorIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

type cursor struct {
	path string
	data []byte
	off  uint64
}

func (c *cursor) fail(field, format string, args ...any) error {
	return &FormatError{c.path, field, fmt.Sprintf(format, args...)}
}

func (c *cursor) remaining() uint64 { return uint64(len(c.data)) - c.off }

func (c *cursor) take(field string, n uint64) ([]byte, error) {
	if n > c.remaining() {
		return nil, c.fail(field, "needs %d bytes at offset %d but the file ends after %d", n, c.off, c.remaining())
	}
	b := c.data[c.off : c.off+n]
	c.off += n
	return b, nil
}

func (c *cursor) u32(field string) (uint32, error) {
	b, err := c.take(field, 4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (c *cursor) u64(field string) (uint64, error) {
	b, err := c.take(field, 8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (c *cursor) str(field string) (string, error) {
	n, err := c.u64(field + " (string length)")
	if err != nil {
		return "", err
	}
	if n > c.remaining() {
		return "", c.fail(field, "string length %d exceeds the %d bytes left in the file", n, c.remaining())
	}
	b, _ := c.take(field, n)
	return string(b), nil
}

func parse(path string, data []byte) (*File, error) {
	c := &cursor{path: path, data: data}
	m, err := c.u32("magic")
	if err != nil {
		return nil, c.fail("header", "file too short for a GGUF header (%d bytes)", len(data))
	}
	if m != magic {
		return nil, c.fail("magic", "not a GGUF file (magic %q)", string(data[:4]))
	}
	f := &File{Path: path, data: data, Alignment: DefaultAlignment,
		kvIndex: map[string]int{}, tensorIndex: map[string]int{}}
	if f.Version, err = c.u32("version"); err != nil {
		return nil, err
	}
	if f.Version != 2 && f.Version != 3 {
		return nil, c.fail("version", "unsupported GGUF version %d (2 and 3 are supported)", f.Version)
	}
	nTensors, err := c.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := c.u64("metadata count")
	if err != nil {
		return nil, err
	}
	// A KV needs at least 8 (key length) + 4 (type) + 1 bytes, a tensor info
	// at least 8 + 4 + 8 + 4 + 8: bound the counts before allocating.
	if nKV > c.remaining()/13 {
		return nil, c.fail("metadata count", "%d entries cannot fit in the %d bytes left", nKV, c.remaining())
	}
	f.KVs = make([]KV, 0, nKV)
	for i := uint64(0); i < nKV; i++ {
		key, err := c.str(fmt.Sprintf("metadata entry %d key", i))
		if err != nil {
			return nil, err
		}
		field := fmt.Sprintf("key %q", key)
		if _, dup := f.kvIndex[key]; dup {
			return nil, c.fail(field, "duplicate key")
		}
		vt, err := c.u32(field + " type")
		if err != nil {
			return nil, err
		}
		v, err := c.value(field, ValueType(vt), 0)
		if err != nil {
			return nil, err
		}
		f.kvIndex[key] = len(f.KVs)
		f.KVs = append(f.KVs, KV{Key: key, Type: ValueType(vt), Value: v})
	}
	if err := f.readAlignment(); err != nil {
		return nil, err
	}
	if nTensors > c.remaining()/32 {
		return nil, c.fail("tensor count", "%d tensors cannot fit in the %d bytes left", nTensors, c.remaining())
	}
	f.Tensors = make([]Tensor, 0, nTensors)
	for i := uint64(0); i < nTensors; i++ {
		t, err := c.tensorInfo(i)
		if err != nil {
			return nil, err
		}
		if _, dup := f.tensorIndex[t.Name]; dup {
			return nil, c.fail(fmt.Sprintf("tensor %q", t.Name), "duplicate tensor name")
		}
		f.tensorIndex[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	pad := (f.Alignment - c.off%f.Alignment) % f.Alignment
	f.DataOffset = c.off + pad
	if len(f.Tensors) > 0 && f.DataOffset > uint64(len(data)) {
		return nil, c.fail("tensor data", "data section at offset %d starts past the end of the file (%d bytes)", f.DataOffset, len(data))
	}
	if err := f.checkTensorExtents(c); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) readAlignment() error {
	i, ok := f.kvIndex["general.alignment"]
	if !ok {
		return nil
	}
	kv := f.KVs[i]
	a, ok := kv.Value.(uint32)
	if !ok {
		return &FormatError{f.Path, `key "general.alignment"`, fmt.Sprintf("must be uint32, found %s", kv.Type)}
	}
	if a == 0 || a&(a-1) != 0 {
		return &FormatError{f.Path, `key "general.alignment"`, fmt.Sprintf("%d is not a power of two", a)}
	}
	// ggml never uses more than a page; a huge alignment is a trick to push
	// the data offset past the end of the file.
	if a > 1<<16 {
		return &FormatError{f.Path, `key "general.alignment"`, fmt.Sprintf("%d exceeds the 65536 limit", a)}
	}
	f.Alignment = uint64(a)
	return nil
}

func (c *cursor) value(field string, t ValueType, depth int) (any, error) {
	switch t {
	case TypeUint8, TypeInt8, TypeBool, TypeUint16, TypeInt16, TypeUint32, TypeInt32,
		TypeFloat32, TypeUint64, TypeInt64, TypeFloat64:
		b, err := c.take(field, uint64(t.fixedSize()))
		if err != nil {
			return nil, err
		}
		return scalar(t, b), nil
	case TypeString:
		return c.str(field)
	case TypeArray:
		if depth >= maxArrayDepth {
			return nil, c.fail(field, "arrays nested deeper than %d", maxArrayDepth)
		}
		et, err := c.u32(field + " array element type")
		if err != nil {
			return nil, err
		}
		n, err := c.u64(field + " array count")
		if err != nil {
			return nil, err
		}
		return c.array(field, ValueType(et), n, depth)
	}
	return nil, c.fail(field, "unknown value type %d", uint32(t))
}

func (c *cursor) array(field string, et ValueType, n uint64, depth int) (Array, error) {
	if !et.valid() {
		return Array{}, c.fail(field, "unknown array element type %d", uint32(et))
	}
	minSize := uint64(et.fixedSize())
	if et == TypeString {
		minSize = 8
	} else if et == TypeArray {
		minSize = 12
	}
	if n > c.remaining()/minSize {
		return Array{}, c.fail(field, "array of %d %s elements cannot fit in the %d bytes left", n, et, c.remaining())
	}
	a := Array{Elem: et}
	switch et {
	case TypeString:
		v := make([]string, n)
		for i := range v {
			s, err := c.str(fmt.Sprintf("%s[%d]", field, i))
			if err != nil {
				return Array{}, err
			}
			v[i] = s
		}
		a.Values = v
	case TypeArray:
		v := make([]Array, n)
		for i := range v {
			x, err := c.value(fmt.Sprintf("%s[%d]", field, i), TypeArray, depth+1)
			if err != nil {
				return Array{}, err
			}
			v[i] = x.(Array)
		}
		a.Values = v
	default:
		b, _ := c.take(field, n*minSize)
		a.Values = scalarSlice(et, b, int(n))
	}
	return a, nil
}

func scalar(t ValueType, b []byte) any {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return b[0]
	case TypeInt8:
		return int8(b[0])
	case TypeBool:
		return b[0] != 0
	case TypeUint16:
		return le.Uint16(b)
	case TypeInt16:
		return int16(le.Uint16(b))
	case TypeUint32:
		return le.Uint32(b)
	case TypeInt32:
		return int32(le.Uint32(b))
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(b))
	case TypeUint64:
		return le.Uint64(b)
	case TypeInt64:
		return int64(le.Uint64(b))
	case TypeFloat64:
		return math.Float64frombits(le.Uint64(b))
	}
	return nil
}

func scalarSlice(t ValueType, b []byte, n int) any {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return append([]uint8(nil), b...)
	case TypeInt8:
		v := make([]int8, n)
		for i := range v {
			v[i] = int8(b[i])
		}
		return v
	case TypeBool:
		v := make([]bool, n)
		for i := range v {
			v[i] = b[i] != 0
		}
		return v
	case TypeUint16:
		v := make([]uint16, n)
		for i := range v {
			v[i] = le.Uint16(b[2*i:])
		}
		return v
	case TypeInt16:
		v := make([]int16, n)
		for i := range v {
			v[i] = int16(le.Uint16(b[2*i:]))
		}
		return v
	case TypeUint32:
		v := make([]uint32, n)
		for i := range v {
			v[i] = le.Uint32(b[4*i:])
		}
		return v
	case TypeInt32:
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(le.Uint32(b[4*i:]))
		}
		return v
	case TypeFloat32:
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
		return v
	case TypeUint64:
		v := make([]uint64, n)
		for i := range v {
			v[i] = le.Uint64(b[8*i:])
		}
		return v
	case TypeInt64:
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(le.Uint64(b[8*i:]))
		}
		return v
	case TypeFloat64:
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		}
		return v
	}
	return nil
}

func (c *cursor) tensorInfo(i uint64) (Tensor, error) {
	name, err := c.str(fmt.Sprintf("tensor %d name", i))
	if err != nil {
		return Tensor{}, err
	}
	field := fmt.Sprintf("tensor %q", name)
	nd, err := c.u32(field + " n_dims")
	if err != nil {
		return Tensor{}, err
	}
	if nd == 0 || nd > MaxDims {
		return Tensor{}, c.fail(field, "n_dims %d is outside 1..%d", nd, MaxDims)
	}
	t := Tensor{Name: name, Dims: make([]uint64, nd)}
	elems := uint64(1)
	for d := range t.Dims {
		if t.Dims[d], err = c.u64(field + " dims"); err != nil {
			return Tensor{}, err
		}
		if t.Dims[d] == 0 {
			return Tensor{}, c.fail(field, "dimension %d is zero", d)
		}
		hi, lo := bits.Mul64(elems, t.Dims[d])
		if hi != 0 || lo > math.MaxInt64 {
			return Tensor{}, c.fail(field, "element count overflows (dims %v)", t.Dims[:d+1])
		}
		elems = lo
	}
	ty, err := c.u32(field + " type")
	if err != nil {
		return Tensor{}, err
	}
	t.Type = ggml.Type(ty)
	if !t.Type.Known() {
		return Tensor{}, c.fail(field, "unknown tensor type %d", ty)
	}
	if t.Offset, err = c.u64(field + " offset"); err != nil {
		return Tensor{}, err
	}
	rowBytes, ok := t.Type.RowBytes(t.Dims[0])
	if !ok {
		return Tensor{}, c.fail(field, "row length %d is not a multiple of the %s block size %d", t.Dims[0], t.Type, t.Type.BlockElems())
	}
	hi, size := bits.Mul64(rowBytes, elems/t.Dims[0])
	if hi != 0 || size > math.MaxInt64 {
		return Tensor{}, c.fail(field, "byte size overflows (dims %v, %s)", t.Dims, t.Type)
	}
	t.Size = size
	return t, nil
}

// checkTensorExtents makes sure every tensor lies inside the file, is aligned,
// and does not overlap another.
func (f *File) checkTensorExtents(c *cursor) error {
	avail := uint64(0)
	if f.DataOffset <= uint64(len(f.data)) {
		avail = uint64(len(f.data)) - f.DataOffset
	}
	order := make([]int, len(f.Tensors))
	for i := range order {
		order[i] = i
	}
	for _, i := range order {
		t := &f.Tensors[i]
		field := fmt.Sprintf("tensor %q", t.Name)
		if t.Offset%f.Alignment != 0 {
			return c.fail(field, "offset %d is not a multiple of the alignment %d", t.Offset, f.Alignment)
		}
		end, carry := bits.Add64(t.Offset, t.Size, 0)
		if carry != 0 || end > avail {
			return c.fail(field, "data [%d, +%d) runs past the end of the file (%d data bytes)", t.Offset, t.Size, avail)
		}
	}
	sort.Slice(order, func(a, b int) bool { return f.Tensors[order[a]].Offset < f.Tensors[order[b]].Offset })
	for k := 1; k < len(order); k++ {
		prev, cur := &f.Tensors[order[k-1]], &f.Tensors[order[k]]
		if prev.Offset+prev.Size > cur.Offset {
			return c.fail(fmt.Sprintf("tensor %q", cur.Name), "data overlaps tensor %q", prev.Name)
		}
	}
	return nil
}
