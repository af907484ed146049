// Package gguf reads and writes GGUF model files (versions 2 and 3).
//
// A file is memory-mapped; tensor data is never copied into the Go heap.
// Every count, length, dimension and offset read from the file is checked
// against the bytes that remain before anything is allocated, and nothing is
// reserved on the word of a count alone: memory grows only with entries that
// were actually read. A hostile header therefore costs at most a small
// multiple (about 4×) of the header bytes really present in the file, never
// what the header claims, and every malformed file is a *FormatError, never a
// panic.
package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"os"
	"sort"
	"strings"
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
	// maxAlignment: ggml never aligns to more than a page; a huge alignment
	// is a trick to push the data offset past the end of the file.
	maxAlignment = 1 << 16
	// maxTensors and maxKVs are far above any real model (a few thousand
	// tensors, a few dozen keys) and keep a large file made of nothing but
	// tiny entries from costing gigabytes of index.
	maxTensors = 1 << 20
	maxKVs     = 1 << 20
	// maxPrealloc caps what is reserved up front from a count read from the
	// file; slices grow past it only as real entries are read.
	maxPrealloc = 1024
)

// Minimum encoded sizes, used to reject counts that cannot fit in the bytes
// left before reading any entry: a key is an 8-byte length, one or more
// bytes, a 4-byte type and at least a 1-byte value; a tensor info is an
// 8-byte name length, one or more bytes, n_dims (4), one dim (8), the type
// (4) and the offset (8).
const (
	minKVBytes     = 8 + 1 + 4 + 1
	minTensorBytes = 8 + 1 + 4 + 8 + 4 + 8
)

// Legacy magics (read little-endian) of the formats GGUF replaced, so that
// such a file gets a useful message rather than "not a GGUF file".
var legacyMagics = map[uint32]string{
	0x67676d6c: "GGML",
	0x67676d66: "GGMF",
	0x67676a74: "GGJT",
	0x67676c61: "GGLA",
}

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
	dev, ino    uint64 // the mapped file's identity, for CheckMapped
}

// Open maps and parses path. The returned file must be closed.
func Open(path string) (*File, error) {
	// O_NONBLOCK: opening a FIFO for reading would otherwise block until
	// some writer appears, before the regular-file check below could
	// refuse it. It changes nothing for a regular file, and mmap ignores it.
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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
	if !st.Mode().IsRegular() {
		// A FIFO or device would block or map something that is not a file.
		return nil, fmt.Errorf("%s: not a regular file", path)
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
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		f.dev, f.ino = uint64(sys.Dev), uint64(sys.Ino)
	}
	return f, nil
}

// CheckMapped reports whether the mapped file was truncated on disk since
// Open: reading its pages past the new end would fault (SIGBUS). A file
// replaced by another (renamed over it) is fine, the mapping keeps the
// old one; so is a file that cannot be looked at, which is left to the
// reads.
func (f *File) CheckMapped() error {
	if f == nil || !f.mapped || f.ino == 0 {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Stat(f.Path, &st); err != nil || uint64(st.Dev) != f.dev || uint64(st.Ino) != f.ino {
		return nil
	}
	if st.Size < int64(len(f.data)) {
		return fmt.Errorf("%s: truncated on disk from %d to %d bytes while mapped", f.Path, len(f.data), st.Size)
	}
	return nil
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

// TensorData returns the bytes of t, a view into the mapped file. It returns
// nil when the file is closed or t does not lie inside it (a Tensor that was
// not read from this file), rather than panicking.
func (f *File) TensorData(t *Tensor) []byte {
	n := uint64(len(f.data))
	start, c1 := bits.Add64(f.DataOffset, t.Offset, 0)
	end, c2 := bits.Add64(start, t.Size, 0)
	if c1 != 0 || c2 != 0 || end > n {
		return nil
	}
	return f.data[start:end:end]
}

// Tensor looks a tensor up by name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.tensorIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// cursor walks the file. Its readers report success with a bool and leave
// building the error to the caller, so that field names (which quote keys and
// tensor names) are formatted only on the error path, not once per element of
// a 150k-entry vocabulary.
type cursor struct {
	path string
	data []byte
	off  uint64
}

func (c *cursor) fail(field, format string, args ...any) error {
	return &FormatError{c.path, field, fmt.Sprintf(format, args...)}
}

func (c *cursor) remaining() uint64 { return uint64(len(c.data)) - c.off }

// short is the error for a field of n bytes that the file is too short to hold.
func (c *cursor) short(field string, n uint64) error {
	return c.fail(field, "needs %d bytes at offset %d but only %d remain (file truncated?)", n, c.off, c.remaining())
}

func (c *cursor) take(n uint64) ([]byte, bool) {
	if n > c.remaining() {
		return nil, false
	}
	b := c.data[c.off : c.off+n : c.off+n]
	c.off += n
	return b, true
}

func (c *cursor) u32() (uint32, bool) {
	b, ok := c.take(4)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

func (c *cursor) u64() (uint64, bool) {
	b, ok := c.take(8)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b), true
}

// strBytes reads a length-prefixed string without copying it.
func (c *cursor) strBytes(field string) ([]byte, error) {
	n, ok := c.u64()
	if !ok {
		return nil, c.short(field+" (string length)", 8)
	}
	b, ok := c.take(n)
	if !ok {
		return nil, c.fail(field, "string length %d exceeds the %d bytes left in the file", n, c.remaining())
	}
	return b, nil
}

func (c *cursor) str(field string) (string, error) {
	b, err := c.strBytes(field)
	return string(b), err
}

func parse(path string, data []byte) (*File, error) {
	c := &cursor{path: path, data: data}
	m, ok := c.u32()
	if !ok {
		return nil, c.fail("header", "file too short for a GGUF header (%d bytes)", len(data))
	}
	if m != magic {
		if name, legacy := legacyMagics[m]; legacy {
			return nil, c.fail("magic", "this is a pre-GGUF %s file; convert it to GGUF", name)
		}
		return nil, c.fail("magic", "not a GGUF file (magic %q)", data[:4])
	}
	f := &File{Path: path, data: data, Alignment: DefaultAlignment,
		kvIndex: map[string]int{}, tensorIndex: map[string]int{}}
	if f.Version, ok = c.u32(); !ok {
		return nil, c.short("version", 4)
	}
	if f.Version != 2 && f.Version != 3 {
		if sw := bits.ReverseBytes32(f.Version); sw == 2 || sw == 3 {
			return nil, c.fail("version", "big-endian GGUF v%d files are not supported", sw)
		}
		return nil, c.fail("version", "unsupported GGUF version %d (2 and 3 are supported)", f.Version)
	}
	nTensors, ok := c.u64()
	if !ok {
		return nil, c.short("tensor count", 8)
	}
	nKV, ok := c.u64()
	if !ok {
		return nil, c.short("metadata count", 8)
	}
	if nKV > c.remaining()/minKVBytes {
		return nil, c.fail("metadata count", "%d entries cannot fit in the %d bytes left", nKV, c.remaining())
	}
	if nKV > maxKVs {
		return nil, c.fail("metadata count", "%d entries exceed the limit of %d", nKV, maxKVs)
	}
	f.KVs = make([]KV, 0, min(nKV, maxPrealloc))
	for i := uint64(0); i < nKV; i++ {
		kf := fmt.Sprintf("metadata entry %d key", i)
		key, err := c.str(kf)
		if err != nil {
			return nil, err
		}
		if key == "" {
			return nil, c.fail(kf, "is empty")
		}
		field := fmt.Sprintf("key %q", key)
		if _, dup := f.kvIndex[key]; dup {
			return nil, c.fail(field, "duplicate key")
		}
		vt, ok := c.u32()
		if !ok {
			return nil, c.short(field+" type", 4)
		}
		v, err := c.value(field, ValueType(vt), 0, true)
		if err != nil {
			return nil, err
		}
		f.kvIndex[key] = len(f.KVs)
		f.KVs = append(f.KVs, KV{Key: key, Type: ValueType(vt), Value: v})
	}
	if err := f.readAlignment(); err != nil {
		return nil, err
	}
	if nTensors > c.remaining()/minTensorBytes {
		return nil, c.fail("tensor count", "%d tensors cannot fit in the %d bytes left", nTensors, c.remaining())
	}
	if nTensors > maxTensors {
		return nil, c.fail("tensor count", "%d tensors exceed the limit of %d", nTensors, maxTensors)
	}
	f.Tensors = make([]Tensor, 0, min(nTensors, maxPrealloc))
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
	// off < 2^63 (it indexes a slice) and pad < 2^16, so this cannot wrap.
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
	const field = `key "general.alignment"`
	kv := f.KVs[i]
	a, ok := kv.Value.(uint32)
	if !ok {
		return &FormatError{f.Path, field, fmt.Sprintf("must be uint32, found %s", describe(kv.Value))}
	}
	if a == 0 || a&(a-1) != 0 {
		return &FormatError{f.Path, field, fmt.Sprintf("%d is not a power of two", a)}
	}
	if a > maxAlignment {
		return &FormatError{f.Path, field, fmt.Sprintf("%d exceeds the %d limit", a, maxAlignment)}
	}
	f.Alignment = uint64(a)
	return nil
}

// value reads a value of type t. With build false it only checks the value
// and moves past it, allocating nothing; array uses that to validate a whole
// array before materializing any of it, so a count that lies, or a bad
// element at index 10^6, costs no memory.
func (c *cursor) value(field string, t ValueType, depth int, build bool) (any, error) {
	switch t {
	case TypeUint8, TypeInt8, TypeBool, TypeUint16, TypeInt16, TypeUint32, TypeInt32,
		TypeFloat32, TypeUint64, TypeInt64, TypeFloat64:
		n := uint64(t.fixedSize())
		b, ok := c.take(n)
		if !ok {
			return nil, c.short(field+" ("+t.String()+" value)", n)
		}
		if !build {
			return nil, nil
		}
		return scalar(t, b), nil
	case TypeString:
		b, err := c.strBytes(field)
		if err != nil || !build {
			return nil, err
		}
		return string(b), nil
	case TypeArray:
		if depth >= maxArrayDepth {
			return nil, c.fail(field, "arrays nested deeper than %d", maxArrayDepth)
		}
		et, ok := c.u32()
		if !ok {
			return nil, c.short(field+" array element type", 4)
		}
		n, ok := c.u64()
		if !ok {
			return nil, c.short(field+" array count", 8)
		}
		return c.array(field, ValueType(et), n, depth, build)
	}
	return nil, c.fail(field, "unknown value type %d", uint32(t))
}

// atIndex renames an error raised inside element i of the array named field,
// so that only failures pay for formatting the element's name. Nested arrays
// pass through here once per level, innermost first, giving field[i][j].
func atIndex(err error, field string, i uint64) error {
	if fe, ok := err.(*FormatError); ok && strings.HasPrefix(fe.Field, field) {
		fe.Field = fmt.Sprintf("%s[%d]%s", field, i, fe.Field[len(field):])
	}
	return err
}

func (c *cursor) array(field string, et ValueType, n uint64, depth int, build bool) (any, error) {
	if !et.valid() {
		return nil, c.fail(field, "unknown array element type %d", uint32(et))
	}
	minSize := uint64(et.fixedSize())
	if et == TypeString {
		minSize = 8
	} else if et == TypeArray {
		minSize = 12
	}
	if n > c.remaining()/minSize {
		return nil, c.fail(field, "array of %d %s elements cannot fit in the %d bytes left", n, et, c.remaining())
	}
	if et.fixedSize() > 0 {
		// n*minSize <= remaining: checked above, so no overflow.
		b, _ := c.take(n * minSize)
		if !build {
			return nil, nil
		}
		return Array{Elem: et, Values: scalarSlice(et, b, int(n))}, nil
	}
	start := c.off
	for i := uint64(0); i < n; i++ {
		if _, err := c.value(field, et, depth+1, false); err != nil {
			return nil, atIndex(err, field, i)
		}
	}
	if !build {
		return nil, nil
	}
	// Every element is known good and really present: build it for real.
	end := c.off
	c.off = start
	a := Array{Elem: et}
	if et == TypeString {
		a.Values = c.strings(n, end-start-8*n)
	} else {
		v := make([]Array, n)
		for i := range v {
			x, err := c.value(field, TypeArray, depth+1, true)
			if err != nil {
				return nil, atIndex(err, field, uint64(i)) // unreachable: validated above
			}
			v[i] = x.(Array)
		}
		a.Values = v
	}
	return a, nil
}

// strings reads n already validated strings holding total bytes of text. All
// the text is copied into one block, one allocation instead of one per token;
// a second walk over the lengths then cuts the block into the strings.
func (c *cursor) strings(n, total uint64) []string {
	start := c.off
	var sb strings.Builder
	sb.Grow(int(total))
	for i := uint64(0); i < n; i++ {
		l, _ := c.u64()
		b, _ := c.take(l)
		sb.Write(b)
	}
	end, all := c.off, sb.String()
	c.off = start
	v := make([]string, n)
	at := uint64(0)
	for i := range v {
		l, _ := c.u64()
		c.off += l
		v[i] = all[at : at+l]
		at += l
	}
	c.off = end
	return v
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

// knownIDs names ggml type ids that this build cannot size or compute with,
// so the error can say what the file needs rather than only "unknown".
// removed ids were dropped from ggml itself: the file must be re-converted.
var knownIDs = map[uint32]struct {
	name    string
	removed bool
}{
	4: {"Q4_2", true}, 5: {"Q4_3", true},
	16: {"IQ2_XXS", false}, 17: {"IQ2_XS", false}, 18: {"IQ3_XXS", false}, 19: {"IQ1_S", false},
	21: {"IQ3_S", false}, 22: {"IQ2_S", false}, 23: {"IQ4_XS", false},
	29: {"IQ1_M", false},
	31: {"Q4_0_4_4", true}, 32: {"Q4_0_4_8", true}, 33: {"Q4_0_8_8", true},
	34: {"TQ1_0", false}, 35: {"TQ2_0", false},
	36: {"IQ4_NL_4_4", true}, 37: {"IQ4_NL_4_8", true}, 38: {"IQ4_NL_8_8", true},
	39: {"MXFP4", false},
}

func (c *cursor) tensorInfo(i uint64) (Tensor, error) {
	nb, err := c.strBytes(fmt.Sprintf("tensor %d name", i))
	if err != nil {
		return Tensor{}, err
	}
	if len(nb) == 0 {
		return Tensor{}, c.fail(fmt.Sprintf("tensor %d name", i), "is empty")
	}
	name := string(nb)
	// The field name is built only when something is wrong.
	field := func() string { return fmt.Sprintf("tensor %q", name) }
	nd, ok := c.u32()
	if !ok {
		return Tensor{}, c.short(field()+" n_dims", 4)
	}
	if nd == 0 || nd > MaxDims {
		return Tensor{}, c.fail(field(), "n_dims %d is outside 1..%d", nd, MaxDims)
	}
	t := Tensor{Name: name, Dims: make([]uint64, nd)}
	elems := uint64(1)
	for d := range t.Dims {
		if t.Dims[d], ok = c.u64(); !ok {
			return Tensor{}, c.short(fmt.Sprintf("%s dims[%d]", field(), d), 8)
		}
		if t.Dims[d] == 0 {
			return Tensor{}, c.fail(field(), "dimension %d is zero", d)
		}
		hi, lo := bits.Mul64(elems, t.Dims[d])
		if hi != 0 || lo > math.MaxInt64 {
			return Tensor{}, c.fail(field(), "element count overflows (dims %v)", t.Dims[:d+1])
		}
		elems = lo
	}
	ty, ok := c.u32()
	if !ok {
		return Tensor{}, c.short(field()+" type", 4)
	}
	t.Type = ggml.Type(ty)
	if !t.Type.Known() {
		if k, ok := knownIDs[ty]; ok && k.removed {
			return Tensor{}, c.fail(field(), "tensor type %d (%s) was removed from ggml; re-convert the model", ty, k.name)
		} else if ok {
			return Tensor{}, c.fail(field(), "tensor type %d (%s) is not supported", ty, k.name)
		}
		return Tensor{}, c.fail(field(), "unknown tensor type %d", ty)
	}
	if t.Offset, ok = c.u64(); !ok {
		return Tensor{}, c.short(field()+" offset", 8)
	}
	rowBytes, ok := t.Type.RowBytes(t.Dims[0])
	if !ok {
		return Tensor{}, c.fail(field(), "row length %d is not a multiple of the %s block size %d", t.Dims[0], t.Type, t.Type.BlockElems())
	}
	hi, size := bits.Mul64(rowBytes, elems/t.Dims[0])
	if hi != 0 || size > math.MaxInt64 {
		return Tensor{}, c.fail(field(), "byte size overflows (dims %v, %s)", t.Dims, t.Type)
	}
	t.Size = size
	return t, nil
}

// checkTensorExtents makes sure every tensor lies inside the file, is aligned,
// and does not overlap another. Any order is accepted (llama.cpp's writer
// lays tensors out in order, other writers need not).
func (f *File) checkTensorExtents(c *cursor) error {
	avail := uint64(0)
	if f.DataOffset <= uint64(len(f.data)) {
		avail = uint64(len(f.data)) - f.DataOffset
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset%f.Alignment != 0 {
			return c.fail(fmt.Sprintf("tensor %q", t.Name), "offset %d is not a multiple of the alignment %d", t.Offset, f.Alignment)
		}
		end, carry := bits.Add64(t.Offset, t.Size, 0)
		if carry != 0 || end > avail {
			return c.fail(fmt.Sprintf("tensor %q", t.Name), "data [%d, +%d) runs past the end of the file (%d data bytes)", t.Offset, t.Size, avail)
		}
	}
	order := make([]int, len(f.Tensors))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return f.Tensors[order[a]].Offset < f.Tensors[order[b]].Offset })
	// Sorted by start, any overlap shows up between neighbours; the ends
	// cannot wrap, they were checked against avail above.
	for k := 1; k < len(order); k++ {
		prev, cur := &f.Tensors[order[k-1]], &f.Tensors[order[k]]
		if prev.Offset+prev.Size > cur.Offset {
			return c.fail(fmt.Sprintf("tensor %q", cur.Name), "data [%d, +%d) overlaps tensor %q [%d, +%d)", cur.Offset, cur.Size, prev.Name, prev.Offset, prev.Size)
		}
	}
	return nil
}
