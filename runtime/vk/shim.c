#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

static PFN_vkGetInstanceProcAddr gipa;

void *vkc_load(char *err, int errlen) {
	if (gipa) {
		return (void *)gipa;
	}
	// libvulkan.so.1 is the runtime name; libvulkan.so exists only with
	// development packages installed.
	const char *names[] = {"libvulkan.so.1", "libvulkan.so"};
	void *lib = NULL;
	for (int i = 0; i < 2 && !lib; i++) {
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	}
	if (!lib) {
		snprintf(err, errlen, "dlopen libvulkan.so.1: %s", dlerror());
		return NULL;
	}
	gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
	if (!gipa) {
		snprintf(err, errlen, "dlsym vkGetInstanceProcAddr: %s", dlerror());
		return NULL;
	}
	return (void *)gipa;
}

void vkc_query(vkc_handle instance, vkc_handle phys, vkc_features *out) {
	VkInstance inst = (VkInstance)instance;
	VkPhysicalDevice pd = (VkPhysicalDevice)phys;
	memset(out, 0, sizeof(*out));
	PFN_vkGetPhysicalDeviceProperties props1 = (PFN_vkGetPhysicalDeviceProperties)gipa(inst, "vkGetPhysicalDeviceProperties");
	VkPhysicalDeviceProperties p;
	props1(pd, &p);
	out->api_version = p.apiVersion;
	PFN_vkGetPhysicalDeviceFeatures2 feat2 = (PFN_vkGetPhysicalDeviceFeatures2)gipa(inst, "vkGetPhysicalDeviceFeatures2");
	PFN_vkGetPhysicalDeviceProperties2 props2 = (PFN_vkGetPhysicalDeviceProperties2)gipa(inst, "vkGetPhysicalDeviceProperties2");
	if (!feat2 || !props2 || p.apiVersion < VK_API_VERSION_1_2) {
		// Without the 1.2 structs we report only what 1.0 can tell.
		return;
	}
	int v13 = p.apiVersion >= VK_API_VERSION_1_3;

	VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
	VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = v13 ? &f13 : NULL};
	VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
	VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
	feat2(pd, &f);
	out->storage16 = f11.storageBuffer16BitAccess;
	out->storage8 = f12.storageBuffer8BitAccess;
	out->float16 = f12.shaderFloat16;
	out->int8 = f12.shaderInt8;
	out->int16 = f.features.shaderInt16;
	out->int64 = f.features.shaderInt64;
	out->buffer_device_address = f12.bufferDeviceAddress;
	out->integer_dot = f13.shaderIntegerDotProduct;
	out->subgroup_size_control = f13.subgroupSizeControl;
	out->compute_full_subgroups = f13.computeFullSubgroups;

	VkPhysicalDeviceVulkan13Properties p13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
	VkPhysicalDeviceVulkan12Properties p12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES, .pNext = v13 ? &p13 : NULL};
	VkPhysicalDeviceVulkan11Properties p11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, .pNext = &p12};
	VkPhysicalDeviceProperties2 pp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &p11};
	props2(pd, &pp);
	out->subgroup_size = p11.subgroupSize;
	out->subgroup_stages = p11.subgroupSupportedStages;
	out->subgroup_ops = p11.subgroupSupportedOperations;
	out->max_memory_allocation_size = p11.maxMemoryAllocationSize;
	out->min_subgroup_size = v13 ? p13.minSubgroupSize : p11.subgroupSize;
	out->max_subgroup_size = v13 ? p13.maxSubgroupSize : p11.subgroupSize;
	out->integer_dot_accelerated = v13 && p13.integerDotProduct4x8BitPackedSignedAccelerated;
	out->driver_id = p12.driverID;
	memcpy(out->driver_name, p12.driverName, sizeof(out->driver_name) < VK_MAX_DRIVER_NAME_SIZE ? sizeof(out->driver_name) : VK_MAX_DRIVER_NAME_SIZE);
	memcpy(out->driver_info, p12.driverInfo, sizeof(out->driver_info) < VK_MAX_DRIVER_INFO_SIZE ? sizeof(out->driver_info) : VK_MAX_DRIVER_INFO_SIZE);
	out->driver_name[sizeof(out->driver_name) - 1] = 0;
	out->driver_info[sizeof(out->driver_info) - 1] = 0;
}

int32_t vkc_create_device(vkc_handle instance, vkc_handle phys, uint32_t family, const vkc_enable *en, vkc_handle *device) {
	VkInstance inst = (VkInstance)instance;
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(inst, "vkCreateDevice");
	if (!create) {
		return VK_ERROR_INITIALIZATION_FAILED;
	}
	VkPhysicalDeviceVulkan13Features f13 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
	f13.shaderIntegerDotProduct = en->integer_dot;
	f13.subgroupSizeControl = en->subgroup_size_control;
	int need13 = en->integer_dot || en->subgroup_size_control;
	VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = need13 ? &f13 : NULL};
	f12.storageBuffer8BitAccess = en->storage8;
	f12.shaderFloat16 = en->float16;
	f12.shaderInt8 = en->int8;
	f12.bufferDeviceAddress = en->buffer_device_address;
	VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
	f11.storageBuffer16BitAccess = en->storage16;
	VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
	f.features.shaderInt16 = en->int16;
	f.features.shaderInt64 = en->int64;

	float priority = 1.0f;
	VkDeviceQueueCreateInfo q = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = family,
		.queueCount = 1,
		.pQueuePriorities = &priority,
	};
	VkDeviceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &f,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &q,
	};
	VkDevice dev = VK_NULL_HANDLE;
	VkResult r = create((VkPhysicalDevice)phys, &ci, NULL, &dev);
	*device = (vkc_handle)dev;
	return r;
}

uint64_t vkc_buffer_address(vkc_handle instance, vkc_handle device, vkc_handle buffer) {
	PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa((VkInstance)instance, "vkGetDeviceProcAddr");
	if (!gdpa) {
		return 0;
	}
	PFN_vkGetBufferDeviceAddress f = (PFN_vkGetBufferDeviceAddress)gdpa((VkDevice)device, "vkGetBufferDeviceAddress");
	if (!f) {
		return 0;
	}
	VkBufferDeviceAddressInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = (VkBuffer)buffer};
	return f((VkDevice)device, &info);
}

uint32_t vkc_instance_version(void) {
	PFN_vkEnumerateInstanceVersion f = (PFN_vkEnumerateInstanceVersion)gipa(NULL, "vkEnumerateInstanceVersion");
	uint32_t v = VK_API_VERSION_1_0;
	if (f && f(&v) != VK_SUCCESS) {
		return VK_API_VERSION_1_0;
	}
	return v;
}
