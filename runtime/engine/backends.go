package engine

import (
	"fmt"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/plan"
	"vkchat/runtime/vk"
	"vkchat/runtime/vk/vulkan"
)

// Backends lists the names accepted by Options.Backend. "auto" (the
// default) resolves to one of the others for the machine (ChooseBackend).
var Backends = []string{"auto", "cpu", "vulkan"}

// Choice is a backend picked for the machine and the reason, for the
// devices list and the chat header.
type Choice struct {
	Backend string // "cpu" or "vulkan"
	Reason  string
}

// vulkanDevices is vulkan.Devices; tests replace it.
var vulkanDevices = vulkan.Devices

// ChooseBackend resolves a backend name: "cpu" and "vulkan" stand, and
// "auto" ("" too) is Vulkan on a discrete or integrated GPU and the native
// CPU path otherwise. A CPU-only Vulkan driver (lavapipe) reads weights
// through the same cores and caches as the native kernels, only slower, so
// it is used only when asked for by name. device is the Vulkan device index
// the backend would use (-1: the one it picks).
func ChooseBackend(name string, device int) (Choice, error) {
	switch name {
	case "cpu":
		return Choice{"cpu", "requested"}, nil
	case "vulkan":
		return Choice{"vulkan", "requested"}, nil
	case "", "auto":
	default:
		return Choice{}, fmt.Errorf("unknown backend %q (choose auto, cpu or vulkan)", name)
	}
	infos, err := vulkanDevices()
	if err != nil {
		return Choice{"cpu", "auto: no usable Vulkan driver"}, nil
	}
	if len(infos) == 0 {
		return Choice{"cpu", "auto: no Vulkan device"}, nil
	}
	// the device the Vulkan backend would open, by the one choice
	pick, err := vulkan.Choose(infos, device)
	if err != nil {
		return Choice{"cpu", "auto: no usable Vulkan device (compute queue and Vulkan 1.2)"}, nil
	}
	d := infos[pick]
	if d.Type == "discrete" || d.Type == "integrated" {
		return Choice{"vulkan", fmt.Sprintf("auto: %s GPU", d.Type)}, nil
	}
	return Choice{"cpu", fmt.Sprintf("auto: no GPU; Vulkan device %d is a %s driver", pick, d.Type)}, nil
}

// NewBackend builds the named backend ("cpu" or "vulkan") for m: the one
// place a backend is made, for sessions and for vkchat bench alike. Both
// execute the model's plan, resolved here once for the context.
func NewBackend(name string, m *arch.Model, o backend.Options) (backend.Backend, error) {
	if name != "cpu" && name != "vulkan" {
		return nil, fmt.Errorf("unknown backend %q (choose auto, cpu or vulkan)", name)
	}
	p, err := plan.Resolve(m, o.ContextSize)
	if err != nil {
		return nil, fmt.Errorf("%s backend: %w", name, err)
	}
	if name == "cpu" {
		return cpu.New(p, o)
	}
	return vk.New(p, o)
}
