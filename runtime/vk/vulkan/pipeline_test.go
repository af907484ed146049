package vulkan

import "testing"

// TestRequiredSubgroup: the size a pipeline requires is the largest the
// device offers that its workgroup fills, never below the smallest the
// kernels count on, with full subgroups only where the workgroup is a whole
// number of them; nothing without 1.3 subgroup-size control for compute.
func TestRequiredSubgroup(t *testing.T) {
	ctl := func(min, max uint32, full bool) DeviceInfo {
		return DeviceInfo{Features: Features{SubgroupSizeControl: true, ComputeFullSubgroups: full, RequiredSubgroupStages: stageCompute, MinSubgroupSize: min, MaxSubgroupSize: max}}
	}
	noStage := ctl(8, 32, true)
	noStage.Features.RequiredSubgroupStages = 0
	few := ctl(8, 32, true)
	few.Features.MaxWorkgroupSubgroups = 4
	for _, tc := range []struct {
		name  string
		info  DeviceInfo
		lanes uint32
		size  uint32
		full  bool
	}{
		{"AMD wave32/64, 32-lane workgroup", ctl(32, 64, true), 32, 32, true},
		{"AMD wave32/64, 256 lanes", ctl(32, 64, true), 256, 64, true},
		{"AMD, 8 lanes: at least min", ctl(32, 64, true), 8, 32, false},
		{"Intel SIMD8-32, 8 lanes", ctl(8, 32, true), 8, 8, true},
		{"Intel SIMD8-32, 64 lanes", ctl(8, 32, true), 64, 32, true},
		{"Intel, 24 lanes: not a whole number of 16", ctl(8, 32, true), 24, 16, false},
		{"NVIDIA fixed 32", ctl(32, 32, true), 64, 32, true},
		{"no full-subgroups feature", ctl(32, 64, false), 64, 64, false},
		{"no compute stage", noStage, 32, 0, false},
		{"no control", DeviceInfo{Features: Features{MinSubgroupSize: 8, MaxSubgroupSize: 32}}, 32, 0, false},
		{"more subgroups than a workgroup may hold", few, 256, 0, false},
		{"within that many", few, 64, 32, true},
	} {
		size, full := tc.info.requiredSubgroup([]uint32{tc.lanes, 7})
		if size != tc.size || full != tc.full {
			t.Errorf("%s: (%d, %v), want (%d, %v)", tc.name, size, full, tc.size, tc.full)
		}
	}
	if size, _ := ctl(8, 32, true).requiredSubgroup(nil); size != 0 {
		t.Errorf("a kernel without constants got subgroup size %d", size)
	}
}
