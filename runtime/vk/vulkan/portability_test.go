package vulkan

import (
	"errors"
	"testing"
)

// TestPortabilityEnumeration: the instance asks for
// VK_KHR_portability_enumeration, with its flag, exactly when the loader
// offers it (MoltenVK is listed only then; asking a loader that lacks it
// fails vkCreateInstance), and an instance created that way still lists
// the devices (lavapipe here).
func TestPortabilityEnumeration(t *testing.T) {
	if err := load(); err != nil {
		if errors.Is(err, ErrNoVulkan) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	exts, flags := portability()
	switch {
	case len(exts) == 1 && exts[0] == portabilityEnumeration+"\x00" && flags == instanceCreatePortabilityBit:
		t.Logf("the loader offers %s: enabled with the enumerate-portability flag", portabilityEnumeration)
	case len(exts) == 0 && flags == 0:
		t.Logf("the loader does not offer %s: not requested", portabilityEnumeration)
	default:
		t.Fatalf("portability() = %q, flags %#x: the extension and the flag must go together", exts, flags)
	}
	devs, err := Devices()
	if errors.Is(err, ErrNoVulkan) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("Devices with portability enumeration %v: %v", len(exts) == 1, err)
	}
	if len(devs) == 0 {
		t.Fatal("no devices listed")
	}
	for _, d := range devs {
		t.Logf("device %d: %s (%s, API %s)", d.Index, d.Name, d.Type, d.APIVersion)
	}
}
