// The few Vulkan 1.2/1.3 entry points vulkan-go (header 1.1.88) cannot
// express: the pNext-chained feature/property queries and device creation
// with those feature structs enabled. Everything else goes through vulkan-go.
#ifndef VKCHAT_SHIM_H
#define VKCHAT_SHIM_H

#include <stdint.h>

// Opaque to Go: the shim includes the system Vulkan header, vulkan-go its own.
typedef void *vkc_handle;

typedef struct {
	uint32_t api_version;
	uint32_t subgroup_size;
	uint32_t subgroup_stages;
	uint32_t subgroup_ops;
	uint32_t min_subgroup_size;
	uint32_t max_subgroup_size;
	uint32_t storage16;
	uint32_t storage8;
	uint32_t float16;
	uint32_t int8;
	uint32_t int16;
	uint32_t int64;
	uint32_t buffer_device_address;
	uint32_t integer_dot;
	uint32_t integer_dot_accelerated;
	uint32_t subgroup_size_control;
	uint32_t compute_full_subgroups;
	uint32_t required_subgroup_stages; // stages that take a required subgroup size (1.3)
	uint32_t max_workgroup_subgroups;  // maxComputeWorkgroupSubgroups (1.3)
	uint32_t driver_id;
	uint64_t max_memory_allocation_size;
	uint32_t compute_units; // SMs (VK_NV_shader_sm_builtins) or CUs (VK_AMD_shader_core_properties); 0: not told
	char driver_name[256];
	char driver_info[256];
} vkc_features;

typedef struct {
	uint32_t storage16;
	uint32_t storage8;
	uint32_t float16;
	uint32_t int8;
	uint32_t int16;
	uint32_t int64;
	uint32_t buffer_device_address;
	uint32_t integer_dot;
	uint32_t subgroup_size_control;
	uint32_t compute_full_subgroups;
} vkc_enable;

// vkc_load opens the Vulkan loader (path, when not NULL or empty, else the
// platform's usual names); it returns vkGetInstanceProcAddr or NULL with a
// message in err.
void *vkc_load(const char *path, char *err, int errlen);
// vkc_instance_has_extension and vkc_device_has_extension report whether
// the loader (or the device) offers the named extension.
int32_t vkc_instance_has_extension(const char *name);
int32_t vkc_device_has_extension(vkc_handle instance, vkc_handle phys, const char *name);
// vkc_query reports what the physical device supports through the structs
// of the API version both the instance (api) and the device allow: chaining
// a 1.3 struct where either is older is invalid usage
// (VUID-VkPhysicalDeviceProperties2-pNext-pNext).
void vkc_query(vkc_handle instance, vkc_handle phys, uint32_t api, vkc_features *out);
// vkc_create_device chains the 1.3 feature struct only when en asks for a
// 1.3 feature, which vkc_query reports only under 1.3.
int32_t vkc_create_device(vkc_handle instance, vkc_handle phys, uint32_t family, const vkc_enable *en, vkc_handle *device);

// Validation: vkc_debug_open attaches a debug-utils messenger to instance
// that records every warning and error message (and prints it to stderr);
// vkc_debug_close destroys it before the instance goes. vkc_debug_take
// copies up to max recorded messages into buf (each NUL-terminated, at
// most len bytes) and returns how many were recorded since the last take,
// clearing them.
int32_t vkc_debug_open(vkc_handle instance);
void vkc_debug_close(vkc_handle instance);
uint32_t vkc_debug_take(char *buf, uint32_t len, uint32_t max);
// vkc_debug_expect marks the messages that follow as provoked on purpose
// (a test of the messenger): they are printed as "expected", so a run that
// fails on any printed message can tell them apart.
void vkc_debug_expect(int32_t on);
uint32_t vkc_instance_version(void);
uint64_t vkc_buffer_address(vkc_handle instance, vkc_handle device, vkc_handle buffer);



// The calls below take arrays of structs. vulkan-go marshals those into C
// memory whose release is tied to a finalizer on a temporary, so a garbage
// collection during the call can free them while the driver reads them
// (seen as crashes in vkCreateComputePipelines under load). These build
// the structs on the C stack instead.
typedef struct vkc_dev vkc_dev;

vkc_dev *vkc_dev_open(vkc_handle instance, vkc_handle device);
void vkc_dev_close(vkc_dev *d);

typedef struct {
	uint32_t type_count;
	uint32_t types[32];
	uint32_t heap_count;
	uint64_t heap_sizes[16];
	uint32_t heap_flags[16];
	uint32_t type_flags[32];
	uint32_t type_heaps[32];
} vkc_memory;

void vkc_memory_properties(vkc_handle instance, vkc_handle phys, vkc_memory *out);
// vkc_queue_family fills the index, flags and timestamp bits of the first
// family with compute (preferring one without graphics); -1 if none.
int32_t vkc_compute_family(vkc_handle instance, vkc_handle phys, uint32_t *flags, uint32_t *timestamp_bits);

int32_t vkc_create_set_layout(vkc_dev *d, const uint32_t *types, uint32_t n, vkc_handle *out);
int32_t vkc_create_pipeline_layout(vkc_dev *d, vkc_handle set_layout, uint32_t push_bytes, vkc_handle *out);
// subgroup > 0 requires that subgroup size (1.3 subgroupSizeControl);
// full also requires full subgroups (computeFullSubgroups).
int32_t vkc_create_compute_pipeline(vkc_dev *d, vkc_handle cache, vkc_handle module, vkc_handle layout, const uint32_t *spec, uint32_t n, uint32_t subgroup, uint32_t full, vkc_handle *out);
int32_t vkc_create_descriptor_pool(vkc_dev *d, uint32_t max_sets, const uint32_t *types, const uint32_t *counts, uint32_t n, vkc_handle *out);
void vkc_write_set(vkc_dev *d, vkc_handle set, uint32_t n, const uint32_t *types, const vkc_handle *buffers, const uint64_t *offsets, const uint64_t *ranges, const vkc_handle *views);
void vkc_cmd_barrier(vkc_dev *d, vkc_handle cb, int32_t host);
void vkc_cmd_copy(vkc_dev *d, vkc_handle cb, vkc_handle src, vkc_handle dst, uint64_t src_off, uint64_t dst_off, uint64_t size);
int32_t vkc_queue_submit(vkc_dev *d, vkc_handle queue, const vkc_handle *cbs, uint32_t n, vkc_handle fence);
#endif
