package vulkan

import (
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// Buffer is a storage buffer placed in one of the device's memory blocks.
// Its memory returns to the device only on Device.Close: the runtime's
// users allocate up front (a forward pass's buffers are fixed at load), so
// blocks are never freed piecemeal.
type Buffer struct {
	d      *Device
	Name   string
	Size   uint64
	Kind   MemKind
	buf    vk.Buffer
	mapped unsafe.Pointer // nil unless the memory is host-visible
	views  map[[3]uint64]vk.BufferView
	done   bool
}

// view returns a texel view of [off, off+size), made once per format.
func (b *Buffer) view(off, size uint64, format Format) (vk.BufferView, error) {
	if format == 0 {
		format = R32G32B32A32Uint
	}
	texel := uint64(format.Bytes())
	if texel == 0 {
		return nil, fmt.Errorf("texel view of %q: unsupported format %d", b.Name, format)
	}
	if lim := b.d.Info.Limits.MaxTexelElements; size/texel > lim {
		return nil, fmt.Errorf("texel view of %q: %d bytes is %d texels of %d bytes, over maxTexelBufferElements %d", b.Name, size, size/texel, texel, lim)
	}
	key := [3]uint64{off, size, uint64(format)}
	if v, ok := b.views[key]; ok {
		return v, nil
	}
	ci := &vk.BufferViewCreateInfo{SType: vk.StructureTypeBufferViewCreateInfo, Buffer: b.buf, Format: vk.Format(format), Offset: vk.DeviceSize(off), Range: vk.DeviceSize(size / texel * texel)}
	var v vk.BufferView
	r := vk.CreateBufferView(b.d.dev, ci, nil, &v)
	ci.Free()
	if err := check("vkCreateBufferView", r, "%q, %d bytes at %d", b.Name, size, off); err != nil {
		return nil, err
	}
	if b.views == nil {
		b.views = map[[3]uint64]vk.BufferView{}
	}
	b.views[key] = v
	return v, nil
}

// NewBuffer creates a buffer of size bytes (rounded up to 16 so that uvec4
// loads of the last element stay inside).
func (d *Device) NewBuffer(name string, size uint64, kind MemKind) (*Buffer, error) {
	if size == 0 {
		size = 16
	}
	size = alignUp(size, 16)
	bci := &vk.BufferCreateInfo{
		SType:       vk.StructureTypeBufferCreateInfo,
		Size:        vk.DeviceSize(size),
		Usage:       vk.BufferUsageFlags(vk.BufferUsageStorageBufferBit | vk.BufferUsageUniformTexelBufferBit | vk.BufferUsageStorageTexelBufferBit | vk.BufferUsageUniformBufferBit | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit),
		SharingMode: vk.SharingModeExclusive,
	}
	var buf vk.Buffer
	r := vk.CreateBuffer(d.dev, bci, nil, &buf)
	bci.Free()
	if err := check("vkCreateBuffer", r, "%q, %d bytes", name, size); err != nil {
		return nil, err
	}
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.dev, buf, &req)
	req.Deref()
	blk, off, err := d.arena.alloc(req, kind, name)
	if err != nil {
		vk.DestroyBuffer(d.dev, buf, nil)
		return nil, err
	}
	if err := check("vkBindBufferMemory", vk.BindBufferMemory(d.dev, buf, blk.mem, vk.DeviceSize(off)), "%q at offset %d", name, off); err != nil {
		vk.DestroyBuffer(d.dev, buf, nil)
		return nil, err
	}
	b := &Buffer{d: d, Name: name, Size: size, Kind: kind, buf: buf}
	if blk.mapped != nil {
		b.mapped = unsafe.Add(blk.mapped, off)
	}
	d.onClose(b.Release)
	if d.trace != nil {
		*d.trace = append(*d.trace, b)
	}
	return b, nil
}

// Release destroys the buffer handle; safe to call more than once.
func (b *Buffer) Release() {
	if b == nil || b.done || b.d.hung != nil {
		return // a hung device's work may still use the buffer: leave it
	}
	b.done = true
	for _, v := range b.views {
		vk.DestroyBufferView(b.d.dev, v, nil)
	}
	vk.DestroyBuffer(b.d.dev, b.buf, nil)
}

// Mapped is the buffer's memory as a byte slice, or nil when the memory is
// not host-visible.
func (b *Buffer) Mapped() []byte {
	if b.mapped == nil {
		return nil
	}
	return unsafe.Slice((*byte)(b.mapped), b.Size)
}

// Write copies data to offset off: a memcpy into mapped memory, otherwise
// through the staging buffer in chunks.
func (b *Buffer) Write(off uint64, data []byte) error {
	if off+uint64(len(data)) > b.Size {
		return fmt.Errorf("write of %d bytes at %d overflows buffer %q of %d bytes", len(data), off, b.Name, b.Size)
	}
	if m := b.Mapped(); m != nil {
		copy(m[off:], data)
		return nil
	}
	return b.d.stage(b, off, data, true)
}

// Read copies len(dst) bytes from offset off.
func (b *Buffer) Read(off uint64, dst []byte) error {
	if off+uint64(len(dst)) > b.Size {
		return fmt.Errorf("read of %d bytes at %d overflows buffer %q of %d bytes", len(dst), off, b.Name, b.Size)
	}
	if m := b.Mapped(); m != nil {
		copy(dst, m[off:])
		return nil
	}
	return b.d.stage(b, off, dst, false)
}

const stagingSize = 32 << 20

// stage moves data between host memory and a device-local buffer through a
// host-visible staging buffer, one chunk per submission.
func (d *Device) stage(b *Buffer, off uint64, data []byte, upload bool) error {
	if d.staging == nil {
		trace := d.trace
		d.trace = nil
		s, err := d.NewBuffer("staging", stagingSize, MemHost)
		d.trace = trace
		if err != nil {
			return err
		}
		d.staging = s
	}
	sm := d.staging.Mapped()
	for done := 0; done < len(data); {
		n := min(len(data)-done, stagingSize)
		if upload {
			copy(sm, data[done:done+n])
		}
		err := d.oneShot(func(cb vk.CommandBuffer) {
			at := off + uint64(done)
			if upload {
				d.cmdCopy(cb, d.staging.buf, b.buf, 0, at, uint64(n))
			} else {
				d.cmdCopy(cb, b.buf, d.staging.buf, at, 0, uint64(n))
			}
		})
		if err != nil {
			return fmt.Errorf("staging %d bytes for %q: %w", n, b.Name, err)
		}
		if !upload {
			copy(data[done:done+n], sm)
		}
		done += n
	}
	return nil
}

// Format is the texel format of a texel-buffer view (a VkFormat); the
// zero Format means R32G32B32A32Uint, the widest fetch.
type Format uint32

// The formats a texel view may take.
const (
	R32G32B32A32Uint   = Format(vk.FormatR32g32b32a32Uint)
	R32G32B32A32Sfloat = Format(vk.FormatR32g32b32a32Sfloat)
	R32G32Uint         = Format(vk.FormatR32g32Uint)
	R32Uint            = Format(vk.FormatR32Uint)
	R32Sfloat          = Format(vk.FormatR32Sfloat)
	R16Uint            = Format(vk.FormatR16Uint)
	R16Sfloat          = Format(vk.FormatR16Sfloat)
	R16G16B16A16Sfloat = Format(vk.FormatR16g16b16a16Sfloat)
	R8Uint             = Format(vk.FormatR8Uint)
)

var formatBytes = map[Format]int{
	R32G32B32A32Uint:   16,
	R32G32B32A32Sfloat: 16,
	R32G32Uint:         8,
	R32Uint:            4,
	R32Sfloat:          4,
	R16Uint:            2,
	R16Sfloat:          2,
	R16G16B16A16Sfloat: 8,
	R8Uint:             1,
}

// Bytes is the size of one texel of the format (0: not a format a view
// may take).
func (f Format) Bytes() int {
	if f == 0 {
		f = R32G32B32A32Uint
	}
	return formatBytes[f]
}
