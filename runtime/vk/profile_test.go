package vk

import (
	"testing"

	"vkchat/runtime/vk/vulkan"
)

// TestBandwidthBytes: the read-bandwidth buffer grows with the device (to
// get past its caches) but stays within a binding, an allocation and half
// of what the heap has left.
func TestBandwidthBytes(t *testing.T) {
	const MiB, GiB = 1 << 20, 1 << 30
	type device struct {
		info vulkan.DeviceInfo
		used []uint64
	}
	dev := func(heap, used, storageRange, maxAlloc uint64) device {
		var info vulkan.DeviceInfo
		info.Heaps = []vulkan.Heap{{Size: 256 * MiB}, {Size: heap, DeviceLocal: true}}
		info.Limits = vulkan.Limits{MaxStorageBufferRange: storageRange, MaxTexelElements: 1 << 27}
		info.Features.MaxAllocationSize = maxAlloc
		return device{info, []uint64{0, used}}
	}
	for _, tc := range []struct {
		name string
		d    device
		want uint64
	}{
		{"H200: 1 GiB, not 256 MiB", dev(140*GiB, 2*GiB, 4*GiB-1, 0), 1 * GiB},
		{"8 GiB card: a sixteenth", dev(8*GiB, 0, 4*GiB-1, 0), 512 * MiB},
		{"lavapipe: the storage range", dev(2*GiB, 0, 128*MiB, 0), 128 * MiB},
		{"full heap: half of what is left", dev(4*GiB, 4*GiB-200*MiB, 4*GiB-1, 0), 100 * MiB},
		{"allocation cap", dev(64*GiB, 0, 4*GiB-1, 300*MiB), 300 * MiB},
	} {
		if got := bandwidthBytes(tc.d.info, tc.d.used); got != tc.want {
			t.Errorf("%s: %d MiB, want %d MiB", tc.name, got/MiB, tc.want/MiB)
		}
	}
}

// TestReadBandwidthOnDevice runs the timed kernels on the test device: both
// paths report a rate, and the device's timestamps are there to time them.
func TestReadBandwidthOnDevice(t *testing.T) {
	d := testDevice(t)
	if d.Info.Limits.TimestampBits == 0 {
		t.Errorf("%s's compute queue has no timestamps: the bound falls back to the wall clock", d.Info.Name)
	}
	texel, ssbo, err := d.ReadBandwidth(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if !(texel > 0) || !(ssbo > 0) {
		t.Errorf("bandwidth texel %g, ssbo %g", texel, ssbo)
	}
	t.Logf("%s: %.2f GB/s texel, %.2f GB/s ssbo", d.Info.Name, texel/1e9, ssbo/1e9)
}
