package vk

import (
	"fmt"

	"vkchat/runtime/ggml"
	"vkchat/runtime/vk/vulkan"
)

// A weight matrix is uploaded in a structure-of-arrays layout: each block
// ("unit": one quant block, or 32 values of a float type) is cut into
// fields, and field i of every unit of the matrix is stored contiguously in
// region i. Quants land in regions of whole 16-byte texels, read with one
// wide fetch; scales in regions read as 2- or 4-byte texels. The bytes per
// weight are exactly the file's (float rows are padded to a multiple of 32).
// The shader side of each layout is shaders/types/<type>.glsl.
type field struct {
	ranges [][2]int // byte ranges of the ggml block, concatenated
	format vulkan.Format
}

type typeLayout struct {
	unit   int // elements per unit
	block  int // bytes per unit in the file (float types: per 32 values)
	fields []field
}

const (
	fmtTexel = vulkan.R32G32B32A32Uint
	fmtU32   = vulkan.R32Uint
	fmtU16   = vulkan.R16Uint
	fmtU8    = vulkan.R8Uint
	fmtU32x2 = vulkan.R32G32Uint
)

func f(format vulkan.Format, ranges ...[2]int) field { return field{ranges, format} }

var layouts = map[ggml.Type]typeLayout{
	ggml.F32:  {32, 128, []field{f(fmtTexel, [2]int{0, 128})}},
	ggml.F16:  {32, 64, []field{f(fmtTexel, [2]int{0, 64})}},
	ggml.BF16: {32, 64, []field{f(fmtTexel, [2]int{0, 64})}},
	// d [0:2] qs [2:18]
	ggml.Q4_0: {32, 18, []field{f(fmtTexel, [2]int{2, 18}), f(fmtU16, [2]int{0, 2})}},
	// d m [0:4] qs [4:20]
	ggml.Q4_1: {32, 20, []field{f(fmtTexel, [2]int{4, 20}), f(fmtU32, [2]int{0, 4})}},
	// d [0:2] qh [2:6] qs [6:22]
	ggml.Q5_0: {32, 22, []field{f(fmtTexel, [2]int{6, 22}), f(fmtU32, [2]int{2, 6}), f(fmtU16, [2]int{0, 2})}},
	// d m [0:4] qh [4:8] qs [8:24]
	ggml.Q5_1: {32, 24, []field{f(fmtTexel, [2]int{8, 24}), f(fmtU32, [2]int{4, 8}), f(fmtU32, [2]int{0, 4})}},
	// d [0:2] qs [2:34]
	ggml.Q8_0: {32, 34, []field{f(fmtTexel, [2]int{2, 34}), f(fmtU16, [2]int{0, 2})}},
	// scales [0:16] qs [16:80] d dmin [80:84]
	ggml.Q2_K: {256, 84, []field{f(fmtTexel, [2]int{16, 80}), f(fmtTexel, [2]int{0, 16}), f(fmtU32, [2]int{80, 84})}},
	// hmask [0:32] qs [32:96] scales [96:108] d [108:110]
	ggml.Q3_K: {256, 110, []field{f(fmtTexel, [2]int{0, 32}), f(fmtTexel, [2]int{32, 96}), f(fmtU32, [2]int{96, 108}), f(fmtU16, [2]int{108, 110})}},
	// d dmin [0:4] scales [4:16] qs [16:144]
	ggml.Q4_K: {256, 144, []field{f(fmtTexel, [2]int{16, 144}), f(fmtTexel, [2]int{0, 16})}},
	// d dmin [0:4] scales [4:16] qh [16:48] qs [48:176]
	ggml.Q5_K: {256, 176, []field{f(fmtTexel, [2]int{48, 176}), f(fmtTexel, [2]int{16, 48}), f(fmtTexel, [2]int{0, 16})}},
	// e [0:1] qs [1:17]; the mat-vec kernels only (no embed kernel reads it)
	ggml.MXFP4: {32, 17, []field{f(fmtTexel, [2]int{1, 17}), f(fmtU8, [2]int{0, 1})}},
	// ql [0:128] qh [128:192] scales [192:208] d [208:210]
	ggml.Q6_K: {256, 210, []field{f(fmtTexel, [2]int{0, 128}), f(fmtTexel, [2]int{128, 192}), f(fmtTexel, [2]int{192, 208}), f(fmtU16, [2]int{208, 210})}},
}

func (fl field) bytes() int {
	n := 0
	for _, r := range fl.ranges {
		n += r[1] - r[0]
	}
	return n
}

// regionAlign keeps every region's view offset legal on any device
// (minTexelBufferOffsetAlignment is at most 256 in practice; checked at use).
const regionAlign = 256

// unitsPerRow is the number of units in a row of cols elements.
func (l typeLayout) unitsPerRow(cols int) int { return (cols + l.unit - 1) / l.unit }

// regionSizes are the byte sizes of the regions of rows rows.
func (l typeLayout) regionSizes(rows, cols int) []uint64 {
	n := uint64(rows) * uint64(l.unitsPerRow(cols))
	out := make([]uint64, len(l.fields))
	for i, fl := range l.fields {
		out[i] = n * uint64(fl.bytes())
	}
	return out
}

// packedBytes is the size of the packed rows including region alignment.
func (l typeLayout) packedBytes(rows, cols int) uint64 {
	var total uint64
	for _, s := range l.regionSizes(rows, cols) {
		total = alignUp(total, regionAlign) + s
	}
	return total
}

// pack writes rows of ggml data (rows × cols elements, row-major, as in the
// file; row(r) returns row r) into dst in the region layout, returning each
// region's offset. Float rows whose length is not a multiple of 32 are
// zero-padded.
func (l typeLayout) pack(t ggml.Type, row func(r int) []byte, rows, cols int, dst []byte) ([]uint64, error) {
	sizes := l.regionSizes(rows, cols)
	offs := make([]uint64, len(sizes))
	var off uint64
	for i, s := range sizes {
		off = alignUp(off, regionAlign)
		offs[i] = off
		off += s
	}
	if uint64(len(dst)) < off {
		return nil, fmt.Errorf("pack buffer of %d bytes, need %d", len(dst), off)
	}
	units := l.unitsPerRow(cols)
	var pad []byte
	if !t.Quantized() {
		pad = make([]byte, l.block)
	}
	for r := 0; r < rows; r++ {
		row := row(r)
		for u := 0; u < units; u++ {
			var blk []byte
			if t.Quantized() {
				blk = row[u*l.block : (u+1)*l.block]
			} else {
				// The last unit of a float row may be partial.
				start := u * l.block
				end := min(start+l.block, len(row))
				clear(pad)
				copy(pad, row[start:end])
				blk = pad
			}
			idx := uint64(r*units + u)
			for i, fl := range l.fields {
				o := offs[i] + idx*uint64(fl.bytes())
				for _, rg := range fl.ranges {
					o += uint64(copy(dst[o:], blk[rg[0]:rg[1]]))
				}
			}
		}
	}
	return offs, nil
}
