package engine

import (
	"errors"
	"strings"
	"testing"

	vkt "github.com/vulkan-go/vulkan"

	"vkchat/runtime/vk/vulkan"
)

// TestChooseBackend checks --backend auto against the device lists a
// machine can show: a GPU wins, a CPU-only Vulkan driver (lavapipe) or no
// Vulkan at all falls to the native CPU path, and names pass through.
func TestChooseBackend(t *testing.T) {
	dev := func(name, typ string) vulkan.DeviceInfo {
		d := vulkan.DeviceInfo{Name: name, Type: typ, ComputeQueue: true}
		d.Features.APIVersion = vkt.MakeVersion(1, 3, 0)
		return d
	}
	gpu, igpu, cpu := dev("Some GPU", "discrete"), dev("iGPU", "integrated"), dev("llvmpipe", "cpu")
	old := cpu
	old.Features.APIVersion = vkt.MakeVersion(1, 1, 0)
	cpu2 := cpu
	cpu2.Index = 1
	for _, c := range []struct {
		name, backend string
		devs          []vulkan.DeviceInfo
		err           error
		want, reason  string
	}{
		{"gpu", "auto", []vulkan.DeviceInfo{gpu}, nil, "vulkan", "discrete GPU"},
		{"igpu", "", []vulkan.DeviceInfo{igpu}, nil, "vulkan", "integrated GPU"},
		{"lavapipe only", "auto", []vulkan.DeviceInfo{cpu}, nil, "cpu", "cpu driver"},
		{"gpu beside lavapipe", "auto", []vulkan.DeviceInfo{cpu, func() vulkan.DeviceInfo { g := gpu; g.Index = 1; return g }()}, nil, "vulkan", "GPU"},
		{"no devices", "auto", nil, nil, "cpu", "no Vulkan device"},
		{"no loader", "auto", nil, errors.New("no libvulkan"), "cpu", "no usable Vulkan driver"},
		{"lavapipe on request", "vulkan", []vulkan.DeviceInfo{cpu}, nil, "vulkan", "requested"},
		{"cpu on request", "cpu", []vulkan.DeviceInfo{gpu}, nil, "cpu", "requested"},
		{"two lavapipes", "auto", []vulkan.DeviceInfo{cpu, cpu2}, nil, "cpu", "cpu driver"},
		{"only Vulkan 1.1", "auto", []vulkan.DeviceInfo{old}, nil, "cpu", "no usable Vulkan device"},
	} {
		t.Run(c.name, func(t *testing.T) {
			old := vulkanDevices
			vulkanDevices = func() ([]vulkan.DeviceInfo, error) { return c.devs, c.err }
			defer func() { vulkanDevices = old }()
			got, err := ChooseBackend(c.backend, -1)
			if err != nil {
				t.Fatal(err)
			}
			if got.Backend != c.want || !strings.Contains(got.Reason, c.reason) {
				t.Errorf("ChooseBackend(%q) = %+v, want %s because %q", c.backend, got, c.want, c.reason)
			}
		})
	}
	if _, err := ChooseBackend("metal", -1); err == nil || !strings.Contains(err.Error(), "metal") {
		t.Errorf("unknown backend: err %v, want one naming it", err)
	}
}
