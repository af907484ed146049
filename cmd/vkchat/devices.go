package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"vkchat/runtime/engine"
	"vkchat/runtime/simd"
	"vkchat/runtime/vk/vulkan"
)

func init() {
	register(command{name: "devices", summary: "list Vulkan devices and what they support", run: runDevices})
}

func runDevices(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("devices", "[--device N] [--require-gpu]", stderr)
	device := fs.Int("device", -1, "the device the check is about (as the other commands take it); -1: the one they pick")
	requireGPU := fs.Bool("require-gpu", false, "fail unless that device is a discrete or integrated GPU (for scripted GPU checks: lavapipe or a missing driver must not pass for a GPU)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	infos, err := vulkan.Devices()
	if err != nil {
		if *requireGPU {
			return fmt.Errorf("no GPU: %w", err)
		}
		return err
	}
	if len(infos) == 0 {
		fmt.Fprintln(stdout, "no Vulkan devices")
		printAutoBackend(stdout, *device)
		if *requireGPU {
			return fmt.Errorf("no GPU: the Vulkan loader lists no devices")
		}
		return nil
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	for _, d := range infos {
		fmt.Fprintf(stdout, "device %d: %s (%s)\n", d.Index, d.Name, d.Type)
		fmt.Fprintf(stdout, "  Vulkan %s, driver %s\n", d.APIVersion, d.Driver)
		for i, h := range d.Heaps {
			var flags []string
			if h.DeviceLocal {
				flags = append(flags, "device-local")
			}
			if h.HostVisible {
				flags = append(flags, "host-visible")
			}
			fmt.Fprintf(stdout, "  heap %d: %s %s\n", i, humanBytes(int64(h.Size)), strings.Join(flags, ", "))
		}
		f := d.Features
		sub := fmt.Sprintf("%d", d.SubgroupSize)
		if f.MinSubgroupSize != f.MaxSubgroupSize && f.MaxSubgroupSize > 0 {
			sub = fmt.Sprintf("%d (%d-%d)", d.SubgroupSize, f.MinSubgroupSize, f.MaxSubgroupSize)
		}
		fmt.Fprintf(stdout, "  subgroup size %s, operations: %s\n", sub, strings.Join(d.SubgroupOps, " "))
		units := "not told by the driver"
		if d.ComputeUnits > 0 {
			units = fmt.Sprintf("%d", d.ComputeUnits)
		}
		fmt.Fprintf(stdout, "  compute units (SMs/CUs): %s\n", units)
		fmt.Fprintf(stdout, "  16-bit storage %s, 8-bit storage %s, fp16 arithmetic %s, int8 %s, integer dot product %s (accelerated %s)\n",
			yes(f.Storage16), yes(f.Storage8), yes(f.Float16), yes(f.Int8), yes(f.IntegerDot), yes(f.IntegerDotAccelerated))
		l := d.Limits
		fmt.Fprintf(stdout, "  max storage buffer range %s, max texel buffer %d texels, push constants %d bytes, shared memory %s, workgroups %v\n",
			humanBytes(int64(l.MaxStorageBufferRange)), l.MaxTexelElements, l.MaxPushConstants, humanBytes(int64(l.MaxSharedMemory)), l.MaxWorkGroupCount)
		fmt.Fprintf(stdout, "  timestamps: %d bits, %.3g ns per tick; max allocation %s, max workgroup %d invocations\n",
			l.TimestampBits, l.TimestampPeriod, humanBytes(int64(f.MaxAllocationSize)), l.MaxWorkGroupSize)
		switch {
		case !d.ComputeQueue:
			fmt.Fprintln(stdout, "  no compute queue: not usable")
		case !d.Usable():
			fmt.Fprintln(stdout, "  below Vulkan 1.2: not usable")
		}
	}
	// the one device choice: what every other command opens
	pick, err := vulkan.Choose(infos, *device)
	if err != nil {
		return err
	}
	chosen := infos[pick]
	fmt.Fprintf(stdout, "chosen: device %d, %s (%s)\n", pick, chosen.Name, chosen.Type)
	printAutoBackend(stdout, *device)
	if *requireGPU && !chosen.IsGPU() {
		return fmt.Errorf("no GPU: the chosen Vulkan device %d is %s, a %s device (a missing GPU driver or VK_DRIVER_FILES pointing elsewhere leaves only the CPU driver)", pick, chosen.Name, chosen.Type)
	}
	return nil
}

// printAutoBackend says what --backend auto (the default) runs on this
// machine and why.
func printAutoBackend(w io.Writer, device int) {
	c, err := engine.ChooseBackend("auto", device)
	if err != nil {
		fmt.Fprintf(w, "backend auto: %v\n", err)
		return
	}
	fmt.Fprintf(w, "backend auto: %s (%s)", c.Backend, c.Reason)
	if c.Backend == "cpu" {
		fmt.Fprintf(w, ", %s", simd.Describe())
	}
	fmt.Fprintln(w)
}
