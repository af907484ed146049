package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"vkchat/runtime/vk/vulkan"
)

// TestDevicesRequireGPU: --require-gpu passes only when the device the
// other commands would use is a discrete or integrated GPU, and says which
// device it judged; without the flag the listing succeeds either way.
func TestDevicesRequireGPU(t *testing.T) {
	infos, err := vulkan.Devices()
	if err != nil || len(infos) == 0 {
		t.Skipf("no Vulkan device: %v", err)
	}
	pick, err := vulkan.Choose(infos, -1)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := runDevices(context.Background(), nil, &out, &errb); err != nil {
		t.Fatalf("devices: %v", err)
	}
	if !strings.Contains(out.String(), "chosen: device ") {
		t.Errorf("the listing does not name the chosen device:\n%s", out.String())
	}
	out.Reset()
	err = runDevices(context.Background(), []string{"--require-gpu"}, &out, &errb)
	if infos[pick].IsGPU() {
		if err != nil {
			t.Errorf("--require-gpu on %s (%s): %v", infos[pick].Name, infos[pick].Type, err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "a "+infos[pick].Type+" device") {
		t.Errorf("--require-gpu on %s (%s): %v", infos[pick].Name, infos[pick].Type, err)
	}
	// naming the device explicitly is judged the same way
	if err := runDevices(context.Background(), []string{"--require-gpu", "--device", "0"}, &out, &errb); (err == nil) != infos[0].IsGPU() {
		t.Errorf("--require-gpu --device 0 on a %s device: %v", infos[0].Type, err)
	}
}

func TestIsGPU(t *testing.T) {
	for typ, want := range map[string]bool{"discrete": true, "integrated": true, "virtual": false, "cpu": false, "other": false} {
		if got := (vulkan.DeviceInfo{Type: typ}).IsGPU(); got != want {
			t.Errorf("%s: IsGPU %v", typ, got)
		}
	}
}
