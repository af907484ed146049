package vulkan

import (
	"strings"
	"testing"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// fakeArena is an arena over a discrete GPU's memory as the driver would
// describe it: an 8 GiB device-local heap and a 1 GiB host heap, with a
// device-local type, a host-visible non-coherent one on the device heap,
// and a host-visible coherent cached one on the host heap. Allocation and
// mapping are recorded, not performed.
func fakeArena(t *testing.T) (*arena, *int) {
	t.Helper()
	d := &Device{Info: DeviceInfo{Name: "fake dGPU"}}
	d.mem = memoryInfo{
		typeFlags: []vk.MemoryPropertyFlags{propDeviceLocal, propDeviceLocal | propHostVisible, propHostVisible | propCoherent | propCached},
		typeHeap:  []uint32{0, 0, 1},
		heapSize:  []uint64{8 << 30, 1 << 30},
		heapFlags: []vk.MemoryHeapFlags{vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit), 0},
	}
	maps := 0
	var backing [64]byte
	d.arena = arena{
		d: d,
		vkAlloc: func(size uint64, typ uint32) (vk.DeviceMemory, vk.Result) {
			return vk.DeviceMemory(unsafe.Pointer(&backing[0])), vk.Success
		},
		vkMap: func(mem vk.DeviceMemory, size uint64) (unsafe.Pointer, vk.Result) {
			maps++
			return unsafe.Pointer(&backing[0]), vk.Success
		},
	}
	return &d.arena, &maps
}

func req(size uint64, types uint32) vk.MemoryRequirements {
	return vk.MemoryRequirements{Size: vk.DeviceSize(size), Alignment: 256, MemoryTypeBits: types}
}

// TestArenaChargesEachHeap: device-local use beyond the size of the host
// heap must not make a host allocation fail, and each heap's own limit
// still holds.
func TestArenaChargesEachHeap(t *testing.T) {
	a, _ := fakeArena(t)
	if _, _, err := a.alloc(req(3<<30, 0b111), MemDevice, "weights"); err != nil {
		t.Fatalf("3 GiB on the 8 GiB device heap: %v", err)
	}
	if _, _, err := a.alloc(req(16<<20, 0b111), MemHost, "logits"); err != nil {
		t.Fatalf("16 MiB on the host heap after 3 GiB on the device heap: %v", err)
	}
	if got := a.heapUsed; got[0] != 3<<30 || got[1] != 16<<20 {
		t.Errorf("heap use %v, want [3 GiB, 16 MiB]", got)
	}
	_, _, err := a.alloc(req(1<<30, 0b111), MemHost, "too big for the host heap")
	if err == nil || !strings.Contains(err.Error(), "heap 1") || !strings.Contains(err.Error(), "VK_ERROR_OUT_OF_DEVICE_MEMORY") {
		t.Errorf("1 GiB more on a 1 GiB host heap holding 16 MiB: %v", err)
	}
	_, _, err = a.alloc(req(6<<30, 0b111), MemDevice, "too big for the device heap")
	if err == nil || !strings.Contains(err.Error(), "heap 0") {
		t.Errorf("6 GiB more on the 8 GiB device heap holding 3 GiB: %v", err)
	}
	// A block is cut to the exact size where a whole one would overrun.
	a2, _ := fakeArena(t)
	if _, _, err := a2.alloc(req((1<<30)-(8<<20), 0b100), MemHost, "almost the host heap"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a2.alloc(req(4<<20, 0b100), MemHost, "the rest"); err != nil {
		t.Errorf("4 MiB in the last 8 MiB of the host heap: %v", err)
	}
}

// TestArenaLeavesNonCoherentUnmapped: host-visible memory that is not
// coherent is used unmapped (data goes through the staging buffer), and a
// device whose only host-visible type is non-coherent is refused for host
// buffers with a message that says why.
func TestArenaLeavesNonCoherentUnmapped(t *testing.T) {
	a, maps := fakeArena(t)
	b, _, err := a.alloc(req(1<<20, 0b010), MemDevice, "weights on the non-coherent type")
	if err != nil {
		t.Fatal(err)
	}
	if b.mapped != nil || *maps != 0 {
		t.Errorf("non-coherent memory was mapped (%d maps)", *maps)
	}
	h, _, err := a.alloc(req(1<<20, 0b100), MemHost, "logits")
	if err != nil {
		t.Fatal(err)
	}
	if h.mapped == nil || *maps != 1 {
		t.Errorf("coherent host memory was not mapped (%d maps)", *maps)
	}
	_, _, err = a.alloc(req(1<<20, 0b010), MemHost, "step parameters")
	if err == nil || !strings.Contains(err.Error(), "coherent") {
		t.Errorf("a host buffer on a non-coherent type: %v", err)
	}
}
