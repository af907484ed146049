package vulkan

import (
	"errors"
	"testing"

	vk "github.com/vulkan-go/vulkan"
)

func TestChoosePrefersDiscrete(t *testing.T) {
	v12 := vk.MakeVersion(1, 2, 0)
	infos := []DeviceInfo{
		{Index: 0, Name: "cpu", Type: "cpu", ComputeQueue: true, Features: Features{APIVersion: v12}},
		{Index: 1, Name: "igpu", Type: "integrated", ComputeQueue: true, Features: Features{APIVersion: v12}},
		{Index: 2, Name: "old dgpu", Type: "discrete", ComputeQueue: true, Features: Features{APIVersion: vk.MakeVersion(1, 1, 0)}},
		{Index: 3, Name: "dgpu", Type: "discrete", ComputeQueue: true, Features: Features{APIVersion: v12}},
		{Index: 4, Name: "no compute", Type: "discrete", Features: Features{APIVersion: v12}},
	}
	if got, err := Choose(infos, -1); err != nil || got != 3 {
		t.Errorf("best: %d, %v; want 3", got, err)
	}
	if got, err := Choose(infos[:2], -1); err != nil || got != 1 {
		t.Errorf("best of cpu and igpu: %d, %v; want 1", got, err)
	}
	if got, err := Choose(infos, 0); err != nil || got != 0 {
		t.Errorf("explicit 0: %d, %v", got, err)
	}
	if _, err := Choose(infos, 9); err == nil {
		t.Error("device 9 of 5 accepted")
	}
	if _, err := Choose(infos, 4); err == nil {
		t.Error("device without a compute queue accepted")
	}
	if _, err := Choose(infos, 2); err == nil {
		t.Error("a Vulkan 1.1 device accepted by index")
	}
	if _, err := Choose(infos[2:3], -1); !errors.Is(err, ErrNoVulkan) {
		t.Errorf("only a Vulkan 1.1 device: %v, want ErrNoVulkan", err)
	}
	// equals: the first listed; an unnamed type ranks last
	two := []DeviceInfo{infos[0], infos[0], {Name: "odd", Type: "", ComputeQueue: true, Features: Features{APIVersion: v12}}}
	if got, err := Choose(two, -1); err != nil || got != 0 {
		t.Errorf("two CPU devices and an unnamed one: %d, %v; want 0", got, err)
	}
}

func TestDevices(t *testing.T) {
	testDevice(t) // skips without Vulkan
	infos, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) == 0 {
		t.Fatal("no devices listed though one opened")
	}
	for _, d := range infos {
		t.Logf("%d: %s (%s) %s, subgroup %d %v, features %+v", d.Index, d.Name, d.Type, d.Driver, d.SubgroupSize, d.SubgroupOps, d.Features)
		if d.Name == "" || d.Type == "" || len(d.Heaps) == 0 {
			t.Errorf("device %d: incomplete %+v", d.Index, d)
		}
		if d.Features.APIVersion >= vk.MakeVersion(1, 2, 0) {
			if d.SubgroupSize == 0 || d.Features.DriverName == "" || d.Features.MaxAllocationSize == 0 {
				t.Errorf("device %d: the 1.2 property queries returned nothing: %+v", d.Index, d.Features)
			}
		}
		if d.Limits.MaxStorageBufferRange == 0 || d.Limits.MaxTexelElements == 0 || d.Limits.MaxWorkGroupCount[0] == 0 {
			t.Errorf("device %d: limits %+v", d.Index, d.Limits)
		}
	}
}

func TestSureSubgroup(t *testing.T) {
	for _, c := range []struct {
		name             string
		vendor           uint32
		size, minS, maxS uint32
		want             uint32
	}{
		{"fixed size, Vulkan 1.3", 0x10DE, 32, 32, 32, 32},
		{"lavapipe", 0x10005, 8, 8, 8, 8},
		{"Intel, Vulkan 1.3", vendorIntel, 32, 8, 32, 8},
		{"Intel without 1.3", vendorIntel, 32, 32, 32, 8},
		{"AMD wave32/64", vendorAMD, 64, 32, 64, 32},
		{"AMD without 1.3", vendorAMD, 64, 64, 64, 32},
		{"nothing reported", 0x10DE, 0, 0, 0, 1},
	} {
		d := DeviceInfo{VendorID: c.vendor, SubgroupSize: c.size, Features: Features{SubgroupSize: c.size, MinSubgroupSize: c.minS, MaxSubgroupSize: c.maxS}}
		if got := d.SureSubgroup(); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
