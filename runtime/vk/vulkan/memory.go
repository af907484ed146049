package vulkan

import (
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// MemKind says what a buffer's memory is for.
type MemKind int

const (
	// MemDevice is for what the kernels read and write (a model's
	// weights, activations and KV cache): device-local, and also
	// host-visible where the device has such a type on its main heap (UMA,
	// ReBAR, lavapipe) so uploads are plain copies.
	MemDevice MemKind = iota
	// MemHost is for what the host reads or writes every submission (a
	// step's parameters, its logits): host-visible and coherent, cached
	// where possible.
	MemHost
	memKinds
)

func (k MemKind) String() string {
	if k == MemHost {
		return "host-visible"
	}
	return "device-local"
}

// blockSize is the sub-allocation granularity: large enough that a model
// takes few allocations (drivers cap their count, 4096 on many), small
// enough that a heap is not exhausted by slack.
const blockSize = 256 << 20

type block struct {
	mem    vk.DeviceMemory
	size   uint64
	used   uint64
	mapped unsafe.Pointer
	typ    uint32
	kind   MemKind
}

type arena struct {
	d      *Device
	blocks []*block
	// allocated counts device memory per kind, for Memory().
	allocated [memKinds]uint64
	// heapUsed counts what vkchat allocated from each heap: a heap's limit
	// applies to the allocations on it, whatever kind they serve (a
	// discrete GPU's host heap must not be charged for the weights in its
	// device-local one).
	heapUsed []uint64
	types    [memKinds]int
	resolved bool

	// vkAlloc and vkMap are vkAllocateMemory and vkMapMemory; tests
	// replace them to play a device whose heaps they describe.
	vkAlloc func(size uint64, typ uint32) (vk.DeviceMemory, vk.Result)
	vkMap   func(mem vk.DeviceMemory, size uint64) (unsafe.Pointer, vk.Result)
}

func (a *arena) allocate(size uint64, typ uint32) (vk.DeviceMemory, vk.Result) {
	if a.vkAlloc != nil {
		return a.vkAlloc(size, typ)
	}
	ai := &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, AllocationSize: vk.DeviceSize(size), MemoryTypeIndex: typ}
	var mem vk.DeviceMemory
	r := vk.AllocateMemory(a.d.dev, ai, nil, &mem)
	ai.Free()
	return mem, r
}

func (a *arena) mapMemory(mem vk.DeviceMemory, size uint64) (unsafe.Pointer, vk.Result) {
	if a.vkMap != nil {
		return a.vkMap(mem, size)
	}
	var p unsafe.Pointer
	r := vk.MapMemory(a.d.dev, mem, 0, vk.DeviceSize(size), 0, &p)
	return p, r
}

const (
	propDeviceLocal = vk.MemoryPropertyFlags(vk.MemoryPropertyDeviceLocalBit)
	propHostVisible = vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit)
	propCoherent    = vk.MemoryPropertyFlags(vk.MemoryPropertyHostCoherentBit)
	propCached      = vk.MemoryPropertyFlags(vk.MemoryPropertyHostCachedBit)
	heapDeviceLocal = vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit)
)

// pickType chooses the memory type for kind among those allowed by bits.
func (a *arena) pickType(bits uint32, kind MemKind) (int, error) {
	mp := &a.d.mem
	largestLocal := uint64(0)
	for h := range mp.heapSize {
		if mp.heapFlags[h]&vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit) != 0 && mp.heapSize[h] > largestLocal {
			largestLocal = mp.heapSize[h]
		}
	}
	best, bestScore := -1, -1
	for i := range mp.typeFlags {
		if bits&(1<<i) == 0 {
			continue
		}
		f := mp.typeFlags[i]
		heap := mp.heapSize[mp.typeHeap[i]]
		score := -1
		switch kind {
		case MemDevice:
			if f&propDeviceLocal == 0 {
				break
			}
			score = 1
			// Host-visible device memory only helps if it is the main heap;
			// a 256 MiB BAR window would run out under the weights. A
			// non-coherent type still serves, unmapped (see mappable).
			if f&(propHostVisible|propCoherent) == propHostVisible|propCoherent && heap >= largestLocal {
				score = 2
			}
		case MemHost:
			// Only coherent types: the runtime writes and reads mapped
			// memory with plain copies and no vkFlush/vkInvalidate.

			if f&(propHostVisible|propCoherent) != propHostVisible|propCoherent {
				break
			}
			score = 1
			if f&propCached != 0 {
				score = 2
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		if kind == MemHost {
			return 0, fmt.Errorf("vulkan device %s has no host-visible, host-coherent memory type among bits %#x (vkchat does not flush or invalidate non-coherent memory)", a.d.Info.Name, bits)
		}
		return 0, fmt.Errorf("vulkan device %s has no %s memory type among bits %#x", a.d.Info.Name, kind, bits)
	}
	return best, nil
}

// mappable says whether blocks of type typ are mapped for plain copies:
// host-visible and coherent. Host-visible memory without coherence would
// need vkFlushMappedMemoryRanges after every write and an invalidate
// before every read, so the runtime leaves it unmapped and moves data
// through the (coherent) staging buffer instead.
func (a *arena) mappable(typ int) bool {
	f := a.d.mem.typeFlags[typ]
	return f&(propHostVisible|propCoherent) == propHostVisible|propCoherent
}

func alignUp(n, a uint64) uint64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// alloc places a resource with requirements req in a block of its kind,
// opening a new block (or a dedicated allocation for big resources) when
// none has room.
func (a *arena) alloc(req vk.MemoryRequirements, kind MemKind, name string) (*block, uint64, error) {
	typ, err := a.pickType(req.MemoryTypeBits, kind)
	if err != nil {
		return nil, 0, fmt.Errorf("buffer %q: %w", name, err)
	}
	size, align := uint64(req.Size), uint64(req.Alignment)
	for _, b := range a.blocks {
		if b.typ == uint32(typ) && b.kind == kind {
			off := alignUp(b.used, align)
			if off+size <= b.size {
				b.used = off + size
				return b, off, nil
			}
		}
	}
	bs := uint64(blockSize)
	if max := a.d.Info.Features.MaxAllocationSize; max > 0 && bs > max {
		bs = max
	}
	if kind == MemHost {
		bs = 16 << 20
	}
	if size > bs {
		bs = size
	}
	heapIdx := a.d.mem.typeHeap[typ]
	heapSize := a.d.mem.heapSize[heapIdx]
	if len(a.heapUsed) < len(a.d.mem.heapSize) {
		a.heapUsed = append(a.heapUsed, make([]uint64, len(a.d.mem.heapSize)-len(a.heapUsed))...)
	}
	used := a.heapUsed[heapIdx]
	// Some drivers (lavapipe) grant allocations beyond the heap and fail
	// later, or let the process be killed: refuse what cannot fit.
	if used+size > heapSize {
		return nil, 0, &Error{Call: "vkAllocateMemory", Result: vk.ErrorOutOfDeviceMemory, Detail: fmt.Sprintf(
			"%q needs %d bytes of %s memory; %d of the %d-byte heap %d are already allocated by vkchat (checked before asking the driver)",
			name, size, kind, used, heapSize, heapIdx)}
	}
	if max := a.d.Info.Features.MaxAllocationSize; max > 0 && size > max {
		return nil, 0, fmt.Errorf("buffer %q of %d bytes exceeds the device's maxMemoryAllocationSize of %d", name, size, max)
	}
	if used+bs > heapSize {
		bs = size // a whole block would overrun the heap; the exact size fits
	}
	mem, r := a.allocate(bs, uint32(typ))
	if r != vk.Success && bs > size {
		// A smaller, exact allocation may still fit where a block does not.
		bs = size
		mem, r = a.allocate(bs, uint32(typ))
	}
	if err := check("vkAllocateMemory", r, "%q needs %d bytes of %s memory; %d of the %d-byte heap %d are already allocated by vkchat",
		name, size, kind, used, heapSize, heapIdx); err != nil {
		return nil, 0, err
	}
	b := &block{mem: mem, size: bs, typ: uint32(typ), kind: kind, used: size}
	if a.mappable(typ) && !(kind == MemDevice && a.d.Unmapped) {
		p, r := a.mapMemory(mem, bs)
		if err := check("vkMapMemory", r, "%d bytes for %q", bs, name); err != nil {
			a.free(mem)
			return nil, 0, err
		}
		b.mapped = p
	}
	a.blocks = append(a.blocks, b)
	a.allocated[kind] += bs
	a.heapUsed[heapIdx] += bs
	return b, 0, nil
}

func (a *arena) free(mem vk.DeviceMemory) {
	if a.vkAlloc == nil {
		vk.FreeMemory(a.d.dev, mem, nil)
	}
}

func (a *arena) release() {
	for _, b := range a.blocks {
		if b.mapped != nil && a.vkMap == nil {
			vk.UnmapMemory(a.d.dev, b.mem)
		}
		a.free(b.mem)
	}
	a.blocks = nil
	clear(a.heapUsed)
	a.allocated = [memKinds]uint64{}
}
