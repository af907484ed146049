package quant

import (
	"encoding/binary"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"vkchat/runtime/ggml"
	"vkchat/runtime/simd"
)

// Repacked weights. The native Q4_0, Q8_0, MXFP4, Q4_K and Q5_K kernels run
// fastest on rows interleaved in groups of 8 (and the other quantized
// types' kernels on rows whose blocks are interleaved, packInterleaved) (runtime/simd/packed.h): one activation load
// then feeds 8 rows and each row's block sum lands in its own lane, so no
// horizontal sums are needed. llama.cpp repacks Q4_0 at load for the same
// reason. A backend packs its matrices once (Pack) and frees the copies
// when it closes; products look the packed copy up by the address of the
// original data, so callers keep passing the Matrix they have.

type packedMatrix struct {
	typ        ggml.Type
	il         bool // blocks interleaved only (packInterleaved), for the general kernels
	own        bool // a plain copy in the original layout (ownable): products read it instead
	rows, cols int
	groupBytes int    // one group of 8 rows
	data       []byte // rows/8 groups
	// tail is the rows%8 rows past the groups, copied in the original
	// layout: the native kernels read them from here rather than from the
	// model file's mapping, where a truncated file would be a SIGBUS (a
	// vocabulary of 32001 leaves one such row in the output matrix).
	tail []byte
}

// bytes is the memory the copy holds.
func (p *packedMatrix) bytes() int64 { return int64(len(p.data) + len(p.tail)) }

// packedByData maps the first byte of a Matrix's Data to its packed copy,
// counted per Pack that asked for it (two backends on one model share it).
var repackOff = os.Getenv("VKCHAT_CPU_REPACK") == "off"

var packed struct {
	sync.RWMutex
	byData map[*byte]*packedEntry
}

type packedEntry struct {
	p    *packedMatrix
	refs int
}

// packable reports whether m has a packed kernel on this machine.
func packable(m *Matrix) bool {
	if portableOnly || repackOff || simd.Level() == 0 || m.Rows < 8 || m.Cols <= 0 || len(m.Data) == 0 {
		return false
	}
	switch m.Type {
	case ggml.Q4_0, ggml.Q8_0, ggml.Q4_1, ggml.Q5_0, ggml.Q5_1, ggml.Q2_K, ggml.Q3_K, ggml.Q4_K, ggml.Q5_K, ggml.Q6_K, ggml.MXFP4:
		return true
	}
	return false
}

// ownable reports whether m has no packed kernel but a native one, which
// would read m's data from C: a model file's mapping, where a page lost to
// the file being truncated is a SIGBUS that no Go code can catch (a Go
// read of it is a panic under debug.SetPanicOnFault, which the engine
// turns into an error). Pack gives such a matrix a plain copy the backend
// owns, as the packed types get theirs, so a truncated file costs a reply
// and not the process. VKCHAT_CPU_REPACK=off copies nothing, for machines
// short of memory, and so leaves that risk.
func ownable(m *Matrix) bool {
	if portableOnly || repackOff || simd.Level() == 0 || m.Rows <= 0 || m.Cols <= 0 || len(m.Data) == 0 || packable(m) {
		return false
	}
	f, err := formatOf(m.Type)
	return err == nil && f.native
}

// Pack prepares repacked copies of the matrices that have packed kernels
// and returns the function that drops them. The matrices' data must not
// change while they are packed. Matrices without packed kernels (other
// types, fewer than 8 rows, the portable path) are left alone.
//
// bytes is the size of the copies this call holds (shared ones included),
// memory the backend holds on top of the mapped file. VKCHAT_CPU_REPACK=off
// packs nothing, for machines short of memory: the unpacked native kernels
// give the same results, more slowly.
func Pack(ms []Matrix) (free func(), bytes int64) {
	// One Pack at a time, so that a copy is registered only once it is
	// complete and two backends loading one model share it.
	packing.Lock()
	defer packing.Unlock()
	var keys []*byte
	var todo []*Matrix // not packed yet, each once
	seen := map[*byte]bool{}
	for i := range ms {
		m := &ms[i]
		if !packable(m) && !ownable(m) {
			continue
		}
		f, err := formatOf(m.Type)
		if err != nil {
			continue
		}
		if rb, err := f.rowBytes(m.Type, m.Cols); err != nil || len(m.Data) < rb*m.Rows {
			continue
		}
		key := unsafe.SliceData(m.Data)
		keys = append(keys, key)
		packed.RLock()
		have := packed.byData[key] != nil
		packed.RUnlock()
		if !have && !seen[key] {
			seen[key] = true
			todo = append(todo, m)
		}
	}
	made := packAll(todo)
	packed.Lock()
	if packed.byData == nil {
		packed.byData = map[*byte]*packedEntry{}
	}
	for i, m := range todo {
		packed.byData[unsafe.SliceData(m.Data)] = &packedEntry{p: made[i]}
	}
	for _, k := range keys {
		e := packed.byData[k]
		e.refs++
		bytes += e.p.bytes()
	}
	packed.Unlock()
	var once sync.Once
	free = func() {
		once.Do(func() {
			packed.Lock()
			defer packed.Unlock()
			for _, k := range keys {
				if e := packed.byData[k]; e != nil {
					if e.refs--; e.refs == 0 {
						delete(packed.byData, k)
					}
				}
			}
		})
	}
	return free, bytes
}

// packing serializes Pack calls.
var packing sync.Mutex

// packAll repacks ms on every processor, largest matrices first so the
// last to finish is small: a model's copy is made at load, where a few
// GB through one core would add seconds to the first token.
func packAll(ms []*Matrix) []*packedMatrix {
	out := make([]*packedMatrix, len(ms))
	order := make([]int, len(ms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return len(ms[b].Data) - len(ms[a].Data) })
	var next atomic.Int32
	var wg sync.WaitGroup
	// A worker's fault reading the mapped weights (the model file was
	// truncated while loading) is raised again on the caller, which can
	// turn it into an error (the engine's mapped guard); on the worker
	// it would kill the program with SIGBUS.
	var fault atomic.Pointer[chunkPanic]
	for w := min(runtime.GOMAXPROCS(0), len(ms)); w > 0; w-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			defer func() {
				if r := recover(); r != nil {
					if _, isFault := r.(interface{ Addr() uintptr }); !isFault {
						panic(r)
					}
					fault.CompareAndSwap(nil, &chunkPanic{v: r})
					next.Store(int32(len(ms))) // the others stop too
				}
			}()
			for k := int(next.Add(1)) - 1; k < len(ms); k = int(next.Add(1)) - 1 {
				out[order[k]] = packOne(ms[order[k]])
			}
		}()
	}
	wg.Wait()
	if f := fault.Load(); f != nil {
		panic(f.v)
	}
	return out
}

// packOne makes m's packed copy in its type's layout, or a plain one
// (ownable).
func packOne(m *Matrix) *packedMatrix {
	f, _ := formatOf(m.Type)
	rb, _ := f.rowBytes(m.Type, m.Cols)
	if !packable(m) {
		return &packedMatrix{typ: m.Type, own: true, rows: m.Rows, cols: m.Cols, data: slices.Clone(m.Data[:rb*m.Rows])}
	}
	var p *packedMatrix
	switch m.Type {
	case ggml.Q4_0, ggml.Q8_0, ggml.MXFP4:
		p = pack(m)
	case ggml.Q4_K, ggml.Q5_K:
		p = packQ45K(m)
	default:
		p = packInterleaved(m, f)
	}
	if whole := m.Rows &^ 7; whole < m.Rows {
		p.tail = slices.Clone(m.Data[whole*rb : m.Rows*rb])
	}
	return p
}

// lookupPacked returns m's packed copy, if it has a matching one.
func lookupPacked(m *Matrix) *packedMatrix {
	if len(m.Data) == 0 {
		return nil
	}
	packed.RLock()
	e := packed.byData[unsafe.SliceData(m.Data)]
	packed.RUnlock()
	if e == nil {
		return nil
	}
	p := e.p
	if p.typ != m.Type || p.rows != m.Rows || p.cols != m.Cols {
		return nil
	}
	return p
}

// pack lays Q4_0, Q8_0 and MXFP4 rows out in groups of 8
// (runtime/simd/packed.h): per group and block the 8 rows' scales (fp16,
// or MXFP4's E8M0 byte), then their quant bytes interleaved 4 at a time.
func pack(m *Matrix) *packedMatrix {
	nb := m.Cols / 32
	bb, sb, qb := 18, 2, 16 // block bytes, scale bytes, quant bytes per row and block
	switch m.Type {
	case ggml.Q8_0:
		bb, qb = 34, 32
	case ggml.MXFP4:
		bb, sb = 17, 1
	}
	rb := nb * bb
	pb := 8 * (sb + qb) // one group's block
	gb := nb * pb
	groups := m.Rows / 8
	p := &packedMatrix{typ: m.Type, rows: m.Rows, cols: m.Cols, groupBytes: gb, data: make([]byte, groups*gb)}
	for g := 0; g < groups; g++ {
		grp := p.data[g*gb : (g+1)*gb]
		for r := 0; r < 8; r++ {
			row := m.Data[(8*g+r)*rb : (8*g+r+1)*rb]
			for b := 0; b < nb; b++ {
				blk, out := row[b*bb:(b+1)*bb], grp[b*pb:(b+1)*pb]
				copy(out[sb*r:sb*(r+1)], blk[:sb]) // the scale
				spreadWords(out[8*sb+4*r:], blk[sb:], qb/4)
			}
		}
	}
	return p
}

// spreadWords copies n 4-byte words, consecutive in src, to dst 32 bytes
// apart. Experts are packed on first use, in the middle of a step, so this
// is a hot loop: word moves without a bounds check each (checked once
// here) pack an expert several times faster than byte slices' PutUint32
// (docs/benchmarks.md, "quant: the portable kernels' loop shapes").
func spreadWords(dst, src []byte, n int) {
	if n == 0 {
		return
	}
	_, _ = dst[32*(n-1)+3], src[4*n-1]
	d, s := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
	for k := 0; k < n; k++ {
		*(*uint32)(unsafe.Add(d, 32*k)) = *(*uint32)(unsafe.Add(s, 4*k))
	}
}

// Q4_K and Q5_K in groups of 8 rows (runtime/simd/packed.h), per
// super-block: the 8 rows' d and dmin (fp16), their scales decoded to
// bytes (sub-block major), their mins as int16 pairs of sub-blocks (for
// one madd against two sub-block sums of the activations), for Q5_K the
// high-bit bytes interleaved 4 at a time, and the quants interleaved 4
// bytes at a time as Q4_0's are, per pair of sub-blocks (low nibbles the
// even sub-block, high the odd one, as in the original). Decoding the
// 6-bit scales once here, and 8 rows per lane vector in the kernel, is
// what makes the K-quants as cheap per byte as Q4_0.
const (
	pq4kD      = 0
	pq4kDmin   = 16
	pq4kScales = 32
	pq4kMins   = 96
	pq4kQuants = 224 // Q4_K; Q5_K's high bits are here, its quants 256 on
	pq4kBytes  = pq4kQuants + 8*128
	pq5kBytes  = pq4kBytes + 256
)

func packQ45K(m *Matrix) *packedMatrix {
	bb, pb, qoff := 144, pq4kBytes, pq4kQuants
	if m.Type == ggml.Q5_K {
		bb, pb, qoff = 176, pq5kBytes, pq4kQuants+256
	}
	nb := m.Cols / 256
	rb := nb * bb
	gb := nb * pb
	groups := m.Rows / 8
	p := &packedMatrix{typ: m.Type, rows: m.Rows, cols: m.Cols, groupBytes: gb, data: make([]byte, groups*gb)}
	for g := 0; g < groups; g++ {
		for b := 0; b < nb; b++ {
			out := p.data[g*gb+b*pb:][:pb]
			for r := 0; r < 8; r++ {
				blk := m.Data[(8*g+r)*rb+b*bb:][:bb]
				copy(out[pq4kD+2*r:][:2], blk[0:2])
				copy(out[pq4kDmin+2*r:][:2], blk[2:4])
				sc, mn := k4Scales((*[12]byte)(blk[4:16]))
				for s := 0; s < 8; s++ {
					out[pq4kScales+8*s+r] = sc[s]
					binary.LittleEndian.PutUint16(out[pq4kMins+32*(s/2)+4*r+2*(s%2):], uint16(mn[s]))
				}
				q := blk[16:]
				if m.Type == ggml.Q5_K {
					qh := blk[16:48]
					q = blk[48:]
					for k := 0; k < 8; k++ {
						copy(out[pq4kQuants+32*k+4*r:][:4], qh[4*k:][:4])
					}
				}
				for pair := 0; pair < 4; pair++ {
					for k := 0; k < 8; k++ {
						copy(out[qoff+256*pair+32*k+4*r:][:4], q[32*pair+4*k:][:4])
					}
				}
			}
		}
	}
	return p
}

// packInterleaved lays the other quantized types' rows out block by block
// in groups of 8 (group g, block b: the blocks b of rows 8g..8g+7 one
// after another), unchanged otherwise. Their kernels read tiles of up to 8
// rows a block at a time; from the original layout that is 8 streams of
// small pieces, which DRAM serves at a fraction of its bandwidth
// (docs/benchmarks.md, "2026-12-02: the CPU backend interleaves the rows
// of the types it does not repack"), and interleaved it is one stream.
func packInterleaved(m *Matrix, f *format) *packedMatrix {
	bb := f.bytes
	nb := m.Cols / f.elems
	rb := nb * bb
	gb := 8 * rb
	groups := m.Rows / 8
	p := &packedMatrix{typ: m.Type, il: true, rows: m.Rows, cols: m.Cols, groupBytes: gb, data: make([]byte, groups*gb)}
	for g := 0; g < groups; g++ {
		for r := 0; r < 8; r++ {
			row := m.Data[(8*g+r)*rb : (8*g+r+1)*rb]
			for b := 0; b < nb; b++ {
				copy(p.data[g*gb+b*8*bb+r*bb:][:bb], row[b*bb:(b+1)*bb])
			}
		}
	}
	return p
}
