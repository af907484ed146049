package vulkan

import (
	"testing"

	vk "github.com/vulkan-go/vulkan"
)

// TestQueryCappedByAPI: the feature query chains the 1.3 structs only when
// the API version it is given allows them (chaining them under a 1.2
// instance is VUID-VkPhysicalDeviceProperties2-pNext-pNext), and what the
// 1.2 structs report does not depend on it. Under VKCHAT_VALIDATION=1 both
// queries must also pass the layer.
func TestQueryCappedByAPI(t *testing.T) {
	d := testDevice(t)
	if d.Info.Features.APIVersion < vk.MakeVersion(1, 3, 0) || requestedAPI() < vk.MakeVersion(1, 3, 0) {
		t.Skipf("%s or the loader is below Vulkan 1.3: nothing to cap", d.Info.Name)
	}
	f13 := queryFeaturesAt(d.inst, d.phys, vk.MakeVersion(1, 3, 0))
	f12 := queryFeaturesAt(d.inst, d.phys, vk.MakeVersion(1, 2, 0))
	if f12.RequiredSubgroupStages != 0 || f12.MaxWorkgroupSubgroups != 0 || f12.SubgroupSizeControl || f12.ComputeFullSubgroups || f12.IntegerDot ||
		f12.MinSubgroupSize != f12.SubgroupSize || f12.MaxSubgroupSize != f12.SubgroupSize {
		t.Errorf("a 1.2 query reports 1.3 properties: %+v", f12)
	}
	if f12.SubgroupSize != f13.SubgroupSize || f12.Storage8 != f13.Storage8 || f12.Float16 != f13.Float16 ||
		f12.DriverName != f13.DriverName || f12.MaxAllocationSize != f13.MaxAllocationSize {
		t.Errorf("the 1.1/1.2 answers differ between the queries:\n1.2: %+v\n1.3: %+v", f12, f13)
	}
	if f13.MinSubgroupSize == 0 || f13.MaxSubgroupSize < f13.MinSubgroupSize {
		t.Errorf("a 1.3 query without the subgroup size range: %+v", f13)
	}
	t.Logf("1.3: subgroup %d-%d, size control %v (stages %#x, %d per workgroup), full subgroups %v",
		f13.MinSubgroupSize, f13.MaxSubgroupSize, f13.SubgroupSizeControl, f13.RequiredSubgroupStages, f13.MaxWorkgroupSubgroups, f13.ComputeFullSubgroups)
}
