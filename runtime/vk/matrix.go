package vk

import (
	"fmt"

	"vkchat/runtime/ggml"

	"vkchat/runtime/vk/vulkan"
)

// Matrix is a weight matrix on the device in the region layout of
// layout.go, split by rows into parts when one view could not span it
// (maxTexelBufferElements) or a part would exceed partBytes.
type Matrix struct {
	Name  string
	Type  ggml.Type
	Rows  int
	Cols  int // elements per row as in the file
	Units int // units per row
	Bytes uint64
	parts []matPart
	// cpuOrder: the rows sum in the CPU backend's order, F32 rows a
	// multiple of 8 long in tinyBLAS's (f32Order 2), quantized rows
	// through the exact kernel (matvec_exact.go). Set on every matrix of
	// a model that rounds as the CPU backend (weights.cpuOrder), on none
	// elsewhere: among products summed in the shaders' orders that order
	// would not give the CPU's bits and would only cost the ordered
	// kernels' speed (a quantized model's F32 router alone: measured, it
	// moved synth-granitehybrid-Q4_K_M past the 0.25).
	cpuOrder bool
	// vecDot: with cpuOrder, Q4_K rows sum in ggml's AVX2 vec_dot lanes,
	// as the CPU backend sums Mamba2's projections (quant.Matrix.VecDot),
	// not in the repacked gemv's order of its other Q4_K products.
	vecDot bool
}

type matPart struct {
	buf   *vulkan.Buffer
	row0  int
	rows  int
	views []vulkan.Arg
}

// partRows is how many rows of the matrix fit in one part.
func (d *gpu) partRows(l typeLayout, rows, cols int) int {
	units := uint64(l.unitsPerRow(cols))
	limit := rows
	for _, fl := range l.fields {
		perRow := units * uint64(fl.bytes())
		texels := d.Info.Limits.MaxTexelElements * uint64(fl.format.Bytes())
		if perRow > 0 && texels/perRow < uint64(limit) {
			limit = int(texels / perRow)
		}
	}
	if d.partBytes > 0 {
		perRow := l.packedBytes(1, cols)
		if perRow > 0 && d.partBytes/perRow < uint64(limit) {
			limit = int(d.partBytes / perRow)
		}
	}
	return max(limit, 1)
}

// UploadMatrix copies a ggml matrix (rows × cols, file layout) to the
// device in the region layout. data may come in pieces, each a whole number
// of rows, that are stacked (Q, K and V become one matrix this way).
func (d *gpu) uploadMatrix(name string, t ggml.Type, rows, cols int, data ...[]byte) (*Matrix, error) {
	l, ok := layouts[t]
	if !ok {
		return nil, fmt.Errorf("tensor %q: type %s has no Vulkan kernel", name, t)
	}
	if align := d.Info.Limits.MinTexelAlignment; align > regionAlign {
		return nil, fmt.Errorf("device needs texel views aligned to %d bytes, the layout assumes at most %d", align, regionAlign)
	}
	rowBytes, ok := t.RowBytes(uint64(cols))
	if !ok {
		return nil, fmt.Errorf("tensor %q: %d columns is not a whole number of %s blocks", name, cols, t)
	}
	var rowsOf [][]byte // each row's bytes, over the stacked pieces
	total := 0
	for _, p := range data {
		if uint64(len(p))%rowBytes != 0 {
			return nil, fmt.Errorf("tensor %q: piece of %d bytes is not whole rows of %d bytes", name, len(p), rowBytes)
		}
		n := int(uint64(len(p)) / rowBytes)
		for r := 0; r < n; r++ {
			rowsOf = append(rowsOf, p[uint64(r)*rowBytes:uint64(r+1)*rowBytes])
		}
		total += n
	}
	if total != rows {
		return nil, fmt.Errorf("tensor %q: data holds %d rows of %d %s, expected %d", name, total, cols, t, rows)
	}
	m := &Matrix{Name: name, Type: t, Rows: rows, Cols: cols, Units: l.unitsPerRow(cols)}
	per := d.partRows(l, rows, cols)
	for r0 := 0; r0 < rows; r0 += per {
		n := min(per, rows-r0)
		size := l.packedBytes(n, cols)
		pname := name
		if per < rows {
			pname = fmt.Sprintf("%s[rows %d:%d]", name, r0, r0+n)
		}
		buf, err := d.NewBuffer(pname, size, vulkan.MemDevice)
		if err != nil {
			return nil, err
		}
		src := func(r int) []byte { return rowsOf[r0+r] }
		var offs []uint64
		if mp := buf.Mapped(); mp != nil {
			offs, err = l.pack(t, src, n, cols, mp)
		} else {
			tmp := make([]byte, size)
			if offs, err = l.pack(t, src, n, cols, tmp); err == nil {
				err = buf.Write(0, tmp)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		sizes := l.regionSizes(n, cols)
		p := matPart{buf: buf, row0: r0, rows: n}
		for i, fl := range l.fields {
			p.views = append(p.views, vulkan.Arg{B: buf, Off: offs[i], Size: sizes[i], Format: fl.format})
		}
		m.parts = append(m.parts, p)
		m.Bytes += buf.Size
	}
	return m, nil
}
