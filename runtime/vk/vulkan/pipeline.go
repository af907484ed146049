package vulkan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// Kernel is one compute pipeline: a SPIR-V compute shader with its
// specialization constants fixed, its bindings' descriptor types read from
// the SPIR-V (reflect.go), and a push constant block of push bytes.
type Kernel struct {
	Name string
	Spec []uint32
	// Subgroup is the subgroup size the pipeline was created to require
	// (0: the driver's choice); see DeviceInfo.RequiredSubgroup.
	Subgroup uint32
	types    []vk.DescriptorType
	bindings int
	push     uint32
	dsl      vk.DescriptorSetLayout
	layout   vk.PipelineLayout
	pipe     vk.Pipeline
}

func (k *Kernel) destroy(d *Device) {
	if k.pipe != nil {
		vk.DestroyPipeline(d.dev, k.pipe, nil)
	}
	if k.layout != nil {
		vk.DestroyPipelineLayout(d.dev, k.layout, nil)
	}
	if k.dsl != nil {
		vk.DestroyDescriptorSetLayout(d.dev, k.dsl, nil)
	}
	k.pipe, k.layout, k.dsl = nil, nil, nil
}

type module struct {
	m     vk.ShaderModule
	types []vk.DescriptorType
}

func (d *Device) module(name string, code []uint32) (vk.ShaderModule, []vk.DescriptorType, error) {
	if m, ok := d.modules[name]; ok {
		return m.m, m.types, nil
	}
	types, err := bindingTypes(code)
	if err != nil {
		return nil, nil, fmt.Errorf("shader %s: %w", name, err)
	}
	ci := &vk.ShaderModuleCreateInfo{SType: vk.StructureTypeShaderModuleCreateInfo, CodeSize: uint(len(code) * 4), PCode: code}
	var m vk.ShaderModule
	r := vk.CreateShaderModule(d.dev, ci, nil, &m)
	ci.Free()
	if err := check("vkCreateShaderModule", r, "shader %s, %d bytes", name, len(code)*4); err != nil {
		return nil, nil, err
	}
	d.modules[name] = module{m, types}
	return m, types, nil
}

// Kernel returns the pipeline for the compute shader name, whose SPIR-V is
// code, with specialization constants spec (constant_id i = spec[i];
// constant 0 is the workgroup size, local_size_x_id = 0), creating it on
// first use. A name stands for one shader: its module is made from the
// first code given and reused. Pipelines live until the device closes.
func (d *Device) Kernel(name string, code []uint32, push uint32, spec ...uint32) (*Kernel, error) {
	for _, k := range d.kernels {
		if k.Name == name && k.push == push && equalU32(k.Spec, spec) {
			return k, nil
		}
	}
	if push > d.Info.Limits.MaxPushConstants {
		return nil, fmt.Errorf("kernel %s needs %d bytes of push constants, device allows %d", name, push, d.Info.Limits.MaxPushConstants)
	}
	m, types, err := d.module(name, code)
	if err != nil {
		return nil, err
	}
	bindings := len(types)
	k := &Kernel{Name: name, Spec: append([]uint32(nil), spec...), types: types, bindings: bindings, push: push}
	ok := false
	defer func() {
		if !ok {
			k.destroy(d)
		}
	}()
	if k.dsl, err = d.createSetLayout(types); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	if k.layout, err = d.createPipelineLayout(k.dsl, push); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	sg, full := d.Info.requiredSubgroup(spec)
	k.Subgroup = sg
	pipe, r := d.createComputePipeline(m, k.layout, spec, sg, full)
	if err := check("vkCreateComputePipelines", r, "kernel %s, specialization %v, subgroup size %d (full %v)", name, spec, sg, full); err != nil {
		return nil, err
	}
	k.pipe = pipe
	d.cache.dirty = true
	d.kernels = append(d.kernels, k)
	ok = true
	return k, nil
}

// stageCompute is VK_SHADER_STAGE_COMPUTE_BIT.
const stageCompute = uint32(vk.ShaderStageComputeBit)

// RequiredSubgroup is the subgroup size a pipeline whose workgroup is
// lanes wide is created with (Device.Kernel), and whether it also requires
// full subgroups; see requiredSubgroup.
func (info DeviceInfo) RequiredSubgroup(lanes uint32) (size uint32, full bool) {
	return info.requiredSubgroup([]uint32{lanes})
}

// requiredSubgroup is the subgroup size a pipeline whose workgroup is
// spec[0] lanes (every kernel's local_size_x_id is 0) is created with, and
// whether it also requires full subgroups. Without a requirement a driver
// that compiles for several widths picks one per pipeline (RADV may run a
// 32-lane workgroup as half a wave64, Intel may split one into SIMD8
// pieces). The requirement is the largest size the device offers that the
// workgroup fills (at most the workgroup, at least minSubgroupSize): the
// kernels count on no more than SureSubgroup, the smallest size, so any
// size from that range keeps them correct, and the largest leaves no lane
// of a wave idle. Full subgroups are required where the workgroup is a
// whole number of them, so no subgroup runs partly empty. Zero where the
// device has no 1.3 subgroup-size control for compute.
func (info DeviceInfo) requiredSubgroup(spec []uint32) (size uint32, full bool) {
	f := info.Features
	if !f.SubgroupSizeControl || f.RequiredSubgroupStages&stageCompute == 0 || len(spec) == 0 || f.MinSubgroupSize == 0 {
		return 0, false
	}
	lanes := spec[0]
	size = f.MinSubgroupSize
	for size*2 <= f.MaxSubgroupSize && size*2 <= lanes {
		size *= 2
	}
	if f.MaxWorkgroupSubgroups > 0 && lanes > size*f.MaxWorkgroupSubgroups {
		// a workgroup of that many subgroups is not allowed: leave the
		// choice to the driver
		return 0, false
	}
	return size, f.ComputeFullSubgroups && lanes%size == 0
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// pipelineCache persists compiled pipelines under $XDG_CACHE_HOME/vkchat so
// that the second start skips shader compilation (seconds on some drivers).
// Failures to read or write it only cost that time, so they are not errors.
type pipelineCache struct {
	path  string
	cache vk.PipelineCache
	dirty bool
}

func (c *pipelineCache) handle() vk.PipelineCache {
	if c == nil {
		return vk.NullPipelineCache
	}
	return c.cache
}

func cachePath(info DeviceInfo) string {
	if os.Getenv("VKCHAT_PIPELINE_CACHE") == "off" {
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	// The driver rejects data from another device or driver version by its
	// header; naming the file by both keeps caches for several devices.
	name := fmt.Sprintf("pipelines-%04x-%04x-%08x-%x.bin", info.VendorID, info.DeviceID, info.DriverVer, info.CacheUUID[:4])
	return filepath.Join(dir, "vkchat", strings.ReplaceAll(name, "/", "_"))
}

func openPipelineCache(d *Device) *pipelineCache {
	c := &pipelineCache{path: cachePath(d.Info)}
	var initial []byte
	if c.path != "" {
		initial, _ = os.ReadFile(c.path)
	}
	ci := &vk.PipelineCacheCreateInfo{SType: vk.StructureTypePipelineCacheCreateInfo}
	var data unsafe.Pointer
	if len(initial) > 0 {
		data = cAlloc(len(initial))
		copy(unsafe.Slice((*byte)(data), len(initial)), initial)
		ci.InitialDataSize, ci.PInitialData = uint(len(initial)), data
	}
	var cache vk.PipelineCache
	r := vk.CreatePipelineCache(d.dev, ci, nil, &cache)
	ci.Free()
	if data != nil {
		cFree(data)
	}
	if r != vk.Success && len(initial) > 0 {
		// Corrupt or foreign data: start empty.
		ci = &vk.PipelineCacheCreateInfo{SType: vk.StructureTypePipelineCacheCreateInfo}
		r = vk.CreatePipelineCache(d.dev, ci, nil, &cache)
		ci.Free()
	}
	if r != vk.Success {
		return nil
	}
	c.cache = cache
	return c
}

func (c *pipelineCache) save(d *Device) error {
	if c == nil || !c.dirty || c.path == "" {
		return nil
	}
	var n uint
	if r := vk.GetPipelineCacheData(d.dev, c.cache, &n, nil); r != vk.Success || n == 0 {
		return nil
	}
	buf := cAlloc(int(n))
	defer cFree(buf)
	if r := vk.GetPipelineCacheData(d.dev, c.cache, &n, buf); r != vk.Success {
		return nil
	}
	data := append([]byte(nil), unsafe.Slice((*byte)(buf), n)...)
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return nil
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return nil
	}
	_ = os.Rename(tmp, c.path)
	return nil
}

func (c *pipelineCache) destroy(d *Device) {
	if c != nil && c.cache != nil {
		vk.DestroyPipelineCache(d.dev, c.cache, nil)
		c.cache = nil
	}
}
