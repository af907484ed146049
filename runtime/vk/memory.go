package vk

import (
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// memKind says what a buffer's memory is for.
type memKind int

const (
	// memDevice is for weights, activations and the KV cache: device-local,
	// and also host-visible where the device has such a type on its main
	// heap (UMA, ReBAR, lavapipe) so uploads are plain copies.
	memDevice memKind = iota
	// memHost is for what the host reads or writes every step (logits, the
	// step parameters): host-visible and coherent, cached where possible.
	memHost
	memKinds
)

func (k memKind) String() string {
	if k == memHost {
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
	kind   memKind
}

type arena struct {
	d      *Device
	blocks []*block
	// allocated counts device memory per kind, for Memory() and for error
	// messages that say how much was already taken.
	allocated [memKinds]uint64
	types     [memKinds]int
	resolved  bool
}

const (
	propDeviceLocal = vk.MemoryPropertyFlags(vk.MemoryPropertyDeviceLocalBit)
	propHostVisible = vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit)
	propCoherent    = vk.MemoryPropertyFlags(vk.MemoryPropertyHostCoherentBit)
	propCached      = vk.MemoryPropertyFlags(vk.MemoryPropertyHostCachedBit)
)

// pickType chooses the memory type for kind among those allowed by bits.
func (a *arena) pickType(bits uint32, kind memKind) (int, error) {
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
		case memDevice:
			if f&propDeviceLocal == 0 {
				break
			}
			score = 1
			// Host-visible device memory only helps if it is the main heap;
			// a 256 MiB BAR window would run out under the weights.
			if f&(propHostVisible|propCoherent) == propHostVisible|propCoherent && heap >= largestLocal {
				score = 2
			}
		case memHost:
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
		return 0, fmt.Errorf("vulkan device %s has no %s memory type among bits %#x", a.d.Info.Name, kind, bits)
	}
	return best, nil
}

func (a *arena) hostVisible(typ int) bool {
	return a.d.mem.typeFlags[typ]&propHostVisible != 0
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
func (a *arena) alloc(req vk.MemoryRequirements, kind memKind, name string) (*block, uint64, error) {
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
	if kind == memHost {
		bs = 16 << 20
	}
	if size > bs {
		bs = size
	}
	heapIdx := a.d.mem.typeHeap[typ]
	heapSize := a.d.mem.heapSize[heapIdx]
	used := a.allocated[memDevice] + a.allocated[memHost]
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
	ai := &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, AllocationSize: vk.DeviceSize(bs), MemoryTypeIndex: uint32(typ)}
	var mem vk.DeviceMemory
	r := vk.AllocateMemory(a.d.dev, ai, nil, &mem)
	ai.Free()
	if r != vk.Success && bs > size {
		// A smaller, exact allocation may still fit where a block does not.
		bs = size
		ai = &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, AllocationSize: vk.DeviceSize(bs), MemoryTypeIndex: uint32(typ)}
		r = vk.AllocateMemory(a.d.dev, ai, nil, &mem)
		ai.Free()
	}
	if err := check("vkAllocateMemory", r, "%q needs %d bytes of %s memory; %d of the %d-byte heap %d are already allocated by vkchat",
		name, size, kind, used, heapSize, heapIdx); err != nil {
		return nil, 0, err
	}
	b := &block{mem: mem, size: bs, typ: uint32(typ), kind: kind, used: size}
	if a.hostVisible(typ) && !(kind == memDevice && a.d.unmapped) {
		var p unsafe.Pointer
		if err := check("vkMapMemory", vk.MapMemory(a.d.dev, mem, 0, vk.DeviceSize(bs), 0, &p), "%d bytes for %q", bs, name); err != nil {
			vk.FreeMemory(a.d.dev, mem, nil)
			return nil, 0, err
		}
		b.mapped = p
	}
	a.blocks = append(a.blocks, b)
	a.allocated[kind] += bs
	return b, 0, nil
}

func (a *arena) release() {
	for _, b := range a.blocks {
		if b.mapped != nil {
			vk.UnmapMemory(a.d.dev, b.mem)
		}
		vk.FreeMemory(a.d.dev, b.mem, nil)
	}
	a.blocks = nil
}
