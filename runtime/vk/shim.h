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
	uint32_t driver_id;
	uint64_t max_memory_allocation_size;
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
} vkc_enable;

// vkc_load opens the Vulkan loader; it returns vkGetInstanceProcAddr or NULL
// with a message in err.
void *vkc_load(char *err, int errlen);
void vkc_query(vkc_handle instance, vkc_handle phys, vkc_features *out);
int32_t vkc_create_device(vkc_handle instance, vkc_handle phys, uint32_t family, const vkc_enable *en, vkc_handle *device);
uint32_t vkc_instance_version(void);
uint64_t vkc_buffer_address(vkc_handle instance, vkc_handle device, vkc_handle buffer);

#endif
