package vulkan

import (
	"fmt"

	vk "github.com/vulkan-go/vulkan"
)

// DeviceInfo describes one physical device as `vkchat devices` lists it.
type DeviceInfo struct {
	Index        int
	Name         string
	Type         string // "discrete", "integrated", "virtual", "cpu", "other"
	APIVersion   string
	Driver       string
	Heaps        []Heap
	SubgroupSize uint32
	SubgroupOps  []string
	Features     Features
	ComputeUnits uint32 // SMs or CUs, where the driver tells them (0: not told)
	Limits       Limits
	ComputeQueue bool
	VendorID     uint32
	DeviceID     uint32
	CacheUUID    [16]byte
	DriverVer    uint32
}

// Heap is one memory heap.
type Heap struct {
	Size        uint64
	DeviceLocal bool
	// HostVisible: some memory type on this heap is also host-visible, so
	// weights can be written without a staging copy (UMA, ReBAR, lavapipe).
	HostVisible bool
}

// Limits are the device limits the runtime sizes buffers and dispatches by.
type Limits struct {
	MaxStorageBufferRange uint64
	MaxPushConstants      uint32
	MaxWorkGroupCount     [3]uint32
	MaxWorkGroupSize      uint32
	MaxSharedMemory       uint32
	MinStorageAlignment   uint64
	TimestampPeriod       float32 // nanoseconds per tick
	TimestampBits         uint32
	MaxAllocationCount    uint32
	MaxTexelElements      uint64 // texels one texel-buffer view may span
	MinTexelAlignment     uint64
}

var typeNames = map[vk.PhysicalDeviceType]string{
	vk.PhysicalDeviceTypeDiscreteGpu:   "discrete",
	vk.PhysicalDeviceTypeIntegratedGpu: "integrated",
	vk.PhysicalDeviceTypeVirtualGpu:    "virtual",
	vk.PhysicalDeviceTypeCpu:           "cpu",
	vk.PhysicalDeviceTypeOther:         "other",
}

var subgroupOpNames = []string{"basic", "vote", "arithmetic", "ballot", "shuffle", "shuffle_relative", "clustered", "quad"}

func newInstance() (vk.Instance, error) {
	if err := load(); err != nil {
		return nil, err
	}
	if version := instanceVersion(); version < vk.MakeVersion(1, 2, 0) {
		return nil, fmt.Errorf("%w: the Vulkan loader supports version %s, 1.2 is required", ErrNoVulkan, versionString(version))
	}
	api := requestedAPI()
	app := &vk.ApplicationInfo{
		SType:            vk.StructureTypeApplicationInfo,
		PApplicationName: "vkchat\x00",
		PEngineName:      "vkchat\x00",
		ApiVersion:       api,
	}
	layers, exts := instanceLayers(), instanceExtensions()
	pexts, pflags := portability()
	exts = append(exts, pexts...)
	ci := &vk.InstanceCreateInfo{
		SType:                   vk.StructureTypeInstanceCreateInfo,
		Flags:                   pflags,
		PApplicationInfo:        app,
		EnabledLayerCount:       uint32(len(layers)),
		PpEnabledLayerNames:     layers,
		EnabledExtensionCount:   uint32(len(exts)),
		PpEnabledExtensionNames: exts,
	}
	var inst vk.Instance
	r := vk.CreateInstance(ci, nil, &inst)
	ci.Free()
	app.Free()
	if r != vk.Success {
		err := check("vkCreateInstance", r, "API version %s", versionString(api))
		if validationEnabled() {
			// not ErrNoVulkan: a missing layer must fail the run, not skip it
			return nil, fmt.Errorf("%s=1 needs %s and VK_EXT_debug_utils (Debian: vulkan-validationlayers): %w", ValidationEnv, validationLayer, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrNoVulkan, err)
	}
	if err := vk.InitInstance(inst); err != nil {
		vk.DestroyInstance(inst, nil)
		return nil, fmt.Errorf("%w: %v", ErrNoVulkan, err)
	}
	if err := attachValidation(inst); err != nil {
		vk.DestroyInstance(inst, nil)
		return nil, err
	}
	return inst, nil
}

func versionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22, (v>>12)&0x3ff, v&0xfff)
}

func physicalDevices(inst vk.Instance) ([]vk.PhysicalDevice, error) {
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", vk.EnumeratePhysicalDevices(inst, &n, nil), "count"); err != nil {
		return nil, err
	}
	pds := make([]vk.PhysicalDevice, n)
	if n > 0 {
		if err := check("vkEnumeratePhysicalDevices", vk.EnumeratePhysicalDevices(inst, &n, pds), "%d devices", n); err != nil {
			return nil, err
		}
	}
	return pds[:n], nil
}

func describe(inst vk.Instance, pd vk.PhysicalDevice, index int) DeviceInfo {
	var p vk.PhysicalDeviceProperties
	vk.GetPhysicalDeviceProperties(pd, &p)
	p.Deref()
	p.Limits.Deref()
	l := p.Limits
	f := queryFeatures(inst, pd)
	info := DeviceInfo{
		Index:        index,
		Name:         vk.ToString(p.DeviceName[:]),
		Type:         typeNames[p.DeviceType],
		APIVersion:   versionString(p.ApiVersion),
		Driver:       f.DriverName,
		SubgroupSize: f.SubgroupSize,
		Features:     f,
		ComputeUnits: f.ComputeUnits,
		VendorID:     p.VendorID,
		DeviceID:     p.DeviceID,
		CacheUUID:    p.PipelineCacheUUID,
		DriverVer:    p.DriverVersion,
		Limits: Limits{
			MaxStorageBufferRange: uint64(l.MaxStorageBufferRange),
			MaxPushConstants:      l.MaxPushConstantsSize,
			MaxWorkGroupCount:     l.MaxComputeWorkGroupCount,
			MaxWorkGroupSize:      l.MaxComputeWorkGroupInvocations,
			MaxSharedMemory:       l.MaxComputeSharedMemorySize,
			MinStorageAlignment:   uint64(l.MinStorageBufferOffsetAlignment),
			TimestampPeriod:       l.TimestampPeriod,
			MaxAllocationCount:    l.MaxMemoryAllocationCount,
			MaxTexelElements:      uint64(l.MaxTexelBufferElements),
			MinTexelAlignment:     uint64(l.MinTexelBufferOffsetAlignment),
		},
	}
	if f.DriverInfo != "" {
		info.Driver += " " + f.DriverInfo
	}
	if info.Type == "" {
		info.Type = "other"
	}
	for i, name := range subgroupOpNames {
		if f.SubgroupOps&(1<<i) != 0 {
			info.SubgroupOps = append(info.SubgroupOps, name)
		}
	}
	_, bits, ok := computeFamily(inst, pd)
	info.ComputeQueue = ok
	info.Limits.TimestampBits = bits
	mp := queryMemory(inst, pd)
	for h := range mp.heapSize {
		heap := Heap{Size: mp.heapSize[h], DeviceLocal: mp.heapFlags[h]&vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit) != 0}
		for t := range mp.typeFlags {
			if int(mp.typeHeap[t]) == h && mp.typeFlags[t]&propHostVisible != 0 {
				heap.HostVisible = true
			}
		}
		info.Heaps = append(info.Heaps, heap)
	}
	return info
}

// Devices lists the physical devices in the loader's order.
func Devices() ([]DeviceInfo, error) {
	inst, err := newInstance()
	if err != nil {
		return nil, err
	}
	pds, err := physicalDevices(inst)
	if err != nil {
		destroyInstance(inst)
		return nil, err
	}
	infos := make([]DeviceInfo, len(pds))
	for i, pd := range pds {
		infos[i] = describe(inst, pd, i)
	}
	destroyInstance(inst)
	if err := validationError("listing devices"); err != nil {
		return nil, err
	}
	return infos, nil
}

// typeRank orders device types for Choose: discrete > integrated > virtual
// > CPU > other (and anything unnamed).
var typeRank = map[string]int{"discrete": 0, "integrated": 1, "virtual": 2, "cpu": 3, "other": 4}

func rank(d DeviceInfo) int {
	if r, ok := typeRank[d.Type]; ok {
		return r
	}
	return len(typeRank)
}

// Usable says whether the runtime can open the device: it has a compute
// queue and Vulkan 1.2, the least the runtime's queries, feature structs
// and kernels need.
func (d DeviceInfo) Usable() bool {
	return d.ComputeQueue && d.Features.APIVersion >= vk.MakeVersion(1, 2, 0)
}

// Choose is the one device choice: the index among infos (as Devices lists
// them) that Open(want) opens, `vkchat devices` marks as chosen and the
// engine's automatic backend choice looks at. want itself when it is 0 or
// more and usable, else the usable device of the best type (discrete >
// integrated > virtual > CPU > other), the first listed among equals.
// With no usable device the error wraps ErrNoVulkan.
func Choose(infos []DeviceInfo, want int) (int, error) {
	if want >= 0 {
		if want >= len(infos) {
			return 0, fmt.Errorf("vulkan device %d does not exist (%d devices; see 'vkchat devices')", want, len(infos))
		}
		d := infos[want]
		if !d.ComputeQueue {
			return 0, fmt.Errorf("vulkan device %d (%s) has no compute queue", want, d.Name)
		}
		if !d.Usable() {
			return 0, fmt.Errorf("vulkan device %d (%s) supports Vulkan %s, 1.2 is required", want, d.Name, versionString(d.Features.APIVersion))
		}
		return want, nil
	}
	best := -1
	for i, d := range infos {
		if d.Usable() && (best < 0 || rank(d) < rank(infos[best])) {
			best = i
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("%w: no device with a compute queue and Vulkan 1.2 among %d", ErrNoVulkan, len(infos))
	}
	return best, nil
}

// IsGPU says whether the device is a discrete or integrated GPU: the kinds
// a real-GPU check may count as one (virtual GPUs and CPU drivers such as
// lavapipe are not).
func (d DeviceInfo) IsGPU() bool { return d.Type == "discrete" || d.Type == "integrated" }

// Vendor IDs whose drivers pick a subgroup size per pipeline.
const (
	vendorAMD   = 0x1002
	vendorIntel = 0x8086
)

// SureSubgroup is the subgroup size a kernel can count on without
// subgroup-size control: the reported size is only the default (or the
// largest), and drivers that compile a shader for several widths (Intel
// SIMD8/16/32, AMD wave32/wave64) may split a workgroup of that many lanes
// into smaller subgroups, where a subgroupAdd over "the workgroup" would
// sum only part of it. Vulkan 1.3 reports the range; where no range is
// reported (no 1.3, or min = max) the vendors known to vary get their
// smallest width, which costs only speed if the hardware is fixed.
func (d DeviceInfo) SureSubgroup() uint32 {
	f := d.Features
	s := d.SubgroupSize
	if f.MinSubgroupSize > 0 && f.MinSubgroupSize < s {
		s = f.MinSubgroupSize
	}
	if f.MinSubgroupSize == 0 || f.MinSubgroupSize == f.MaxSubgroupSize {
		// no 1.3 properties (the shim then reports the default size
		// as both): fall back on what the vendor's hardware can do
		switch d.VendorID {
		case vendorIntel:
			s = min(s, 8)
		case vendorAMD:
			s = min(s, 32)
		}
	}
	return max(s, 1)
}
