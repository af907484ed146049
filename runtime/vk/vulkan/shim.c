#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

static PFN_vkGetInstanceProcAddr gipa;

void *vkc_load(const char *path, char *err, int errlen) {
	if (gipa) {
		return (void *)gipa;
	}
	// libvulkan.so.1 is the runtime name; libvulkan.so exists only with
	// development packages installed. On macOS the loader is a dylib that
	// Homebrew puts outside dlopen's default search on Apple Silicon, and
	// MoltenVK alone can stand in for it.
#ifdef __APPLE__
	const char *names[] = {"libvulkan.1.dylib", "/opt/homebrew/lib/libvulkan.1.dylib", "/usr/local/lib/libvulkan.1.dylib",
			       "libMoltenVK.dylib", "/opt/homebrew/lib/libMoltenVK.dylib", "/usr/local/lib/libMoltenVK.dylib"};
#else
	const char *names[] = {"libvulkan.so.1", "libvulkan.so"};
#endif
	int n = (int)(sizeof names / sizeof names[0]);
	if (path && *path) {
		// An explicit loader (VKCHAT_VULKAN_LIBRARY) is the only one tried.
		names[0] = path;
		n = 1;
	}
	void *lib = NULL;
	for (int i = 0; i < n && !lib; i++) {
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	}
	if (!lib) {
		snprintf(err, errlen, "dlopen %s: %s", names[0], dlerror());
		return NULL;
	}
	gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
	if (!gipa) {
		snprintf(err, errlen, "dlsym vkGetInstanceProcAddr: %s", dlerror());
		return NULL;
	}
	return (void *)gipa;
}

void vkc_query(vkc_handle instance, vkc_handle phys, uint32_t api, vkc_features *out) {
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
	// The instance's version caps what may be chained as much as the
	// device's does.
	uint32_t effective = p.apiVersion < api ? p.apiVersion : api;
	int v13 = effective >= VK_API_VERSION_1_3;

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
	out->required_subgroup_stages = v13 ? p13.requiredSubgroupSizeStages : 0;
	out->max_workgroup_subgroups = v13 ? p13.maxComputeWorkgroupSubgroups : 0;
	out->driver_id = p12.driverID;
	memcpy(out->driver_name, p12.driverName, sizeof(out->driver_name) < VK_MAX_DRIVER_NAME_SIZE ? sizeof(out->driver_name) : VK_MAX_DRIVER_NAME_SIZE);
	memcpy(out->driver_info, p12.driverInfo, sizeof(out->driver_info) < VK_MAX_DRIVER_INFO_SIZE ? sizeof(out->driver_info) : VK_MAX_DRIVER_INFO_SIZE);
	out->driver_name[sizeof(out->driver_name) - 1] = 0;
	out->driver_info[sizeof(out->driver_info) - 1] = 0;

	// The compute-unit count sizes split-K attention. Only vendor
	// extensions tell it, and each struct may be chained only where the
	// device offers its extension.
	if (vkc_device_has_extension(instance, phys, "VK_NV_shader_sm_builtins")) {
		VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
		VkPhysicalDeviceProperties2 q = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sm};
		props2(pd, &q);
		out->compute_units = sm.shaderSMCount;
	} else if (vkc_device_has_extension(instance, phys, "VK_AMD_shader_core_properties")) {
		VkPhysicalDeviceShaderCorePropertiesAMD core = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
		VkPhysicalDeviceProperties2 q = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &core};
		props2(pd, &q);
		out->compute_units = core.shaderEngineCount * core.shaderArraysPerEngineCount * core.computeUnitsPerShaderArray;
	}
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
	f13.computeFullSubgroups = en->compute_full_subgroups;
	int need13 = en->integer_dot || en->subgroup_size_control || en->compute_full_subgroups;
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
	// A portability driver (MoltenVK) lists VK_KHR_portability_subset, and
	// the spec requires enabling it wherever it is offered.
	const char *portability[] = {"VK_KHR_portability_subset"};
	if (vkc_device_has_extension(instance, phys, portability[0])) {
		ci.enabledExtensionCount = 1;
		ci.ppEnabledExtensionNames = portability;
	}
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

#include <stdlib.h>

struct vkc_dev {
	VkDevice dev;
	PFN_vkCreateDescriptorSetLayout createSetLayout;
	PFN_vkCreatePipelineLayout createPipelineLayout;
	PFN_vkCreateComputePipelines createComputePipelines;
	PFN_vkCreateDescriptorPool createDescriptorPool;
	PFN_vkUpdateDescriptorSets updateDescriptorSets;
	PFN_vkCmdPipelineBarrier cmdPipelineBarrier;
	PFN_vkCmdCopyBuffer cmdCopyBuffer;
	PFN_vkQueueSubmit queueSubmit;
};

vkc_dev *vkc_dev_open(vkc_handle instance, vkc_handle device) {
	PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa((VkInstance)instance, "vkGetDeviceProcAddr");
	if (!gdpa) {
		return NULL;
	}
	vkc_dev *d = calloc(1, sizeof(*d));
	if (!d) {
		return NULL;
	}
	VkDevice dev = (VkDevice)device;
	d->dev = dev;
	d->createSetLayout = (PFN_vkCreateDescriptorSetLayout)gdpa(dev, "vkCreateDescriptorSetLayout");
	d->createPipelineLayout = (PFN_vkCreatePipelineLayout)gdpa(dev, "vkCreatePipelineLayout");
	d->createComputePipelines = (PFN_vkCreateComputePipelines)gdpa(dev, "vkCreateComputePipelines");
	d->createDescriptorPool = (PFN_vkCreateDescriptorPool)gdpa(dev, "vkCreateDescriptorPool");
	d->updateDescriptorSets = (PFN_vkUpdateDescriptorSets)gdpa(dev, "vkUpdateDescriptorSets");
	d->cmdPipelineBarrier = (PFN_vkCmdPipelineBarrier)gdpa(dev, "vkCmdPipelineBarrier");
	d->cmdCopyBuffer = (PFN_vkCmdCopyBuffer)gdpa(dev, "vkCmdCopyBuffer");
	d->queueSubmit = (PFN_vkQueueSubmit)gdpa(dev, "vkQueueSubmit");
	if (!d->createSetLayout || !d->createPipelineLayout || !d->createComputePipelines || !d->createDescriptorPool ||
	    !d->updateDescriptorSets || !d->cmdPipelineBarrier || !d->cmdCopyBuffer || !d->queueSubmit) {
		free(d);
		return NULL;
	}
	return d;
}

void vkc_dev_close(vkc_dev *d) { free(d); }

void vkc_memory_properties(vkc_handle instance, vkc_handle phys, vkc_memory *out) {
	PFN_vkGetPhysicalDeviceMemoryProperties f = (PFN_vkGetPhysicalDeviceMemoryProperties)gipa((VkInstance)instance, "vkGetPhysicalDeviceMemoryProperties");
	VkPhysicalDeviceMemoryProperties mp;
	memset(out, 0, sizeof(*out));
	f((VkPhysicalDevice)phys, &mp);
	out->type_count = mp.memoryTypeCount;
	for (uint32_t i = 0; i < mp.memoryTypeCount && i < 32; i++) {
		out->type_flags[i] = mp.memoryTypes[i].propertyFlags;
		out->type_heaps[i] = mp.memoryTypes[i].heapIndex;
	}
	out->heap_count = mp.memoryHeapCount;
	for (uint32_t i = 0; i < mp.memoryHeapCount && i < 16; i++) {
		out->heap_sizes[i] = mp.memoryHeaps[i].size;
		out->heap_flags[i] = mp.memoryHeaps[i].flags;
	}
}

int32_t vkc_compute_family(vkc_handle instance, vkc_handle phys, uint32_t *flags, uint32_t *timestamp_bits) {
	PFN_vkGetPhysicalDeviceQueueFamilyProperties f = (PFN_vkGetPhysicalDeviceQueueFamilyProperties)gipa((VkInstance)instance, "vkGetPhysicalDeviceQueueFamilyProperties");
	uint32_t n = 0;
	f((VkPhysicalDevice)phys, &n, NULL);
	if (n == 0) {
		return -1;
	}
	VkQueueFamilyProperties *p = calloc(n, sizeof(*p));
	if (!p) {
		return -1;
	}
	f((VkPhysicalDevice)phys, &n, p);
	int32_t best = -1;
	for (uint32_t i = 0; i < n; i++) {
		if (!(p[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
			continue;
		}
		if (best < 0 || !(p[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
			best = (int32_t)i;
			*flags = p[i].queueFlags;
			*timestamp_bits = p[i].timestampValidBits;
			if (!(p[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
				break;
			}
		}
	}
	free(p);
	return best;
}

int32_t vkc_create_set_layout(vkc_dev *d, const uint32_t *types, uint32_t n, vkc_handle *out) {
	VkDescriptorSetLayoutBinding b[32];
	if (n > 32) {
		return VK_ERROR_TOO_MANY_OBJECTS;
	}
	for (uint32_t i = 0; i < n; i++) {
		b[i] = (VkDescriptorSetLayoutBinding){.binding = i, .descriptorType = (VkDescriptorType)types[i], .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
	}
	VkDescriptorSetLayoutCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = n, .pBindings = b};
	VkDescriptorSetLayout l = VK_NULL_HANDLE;
	VkResult r = d->createSetLayout(d->dev, &ci, NULL, &l);
	*out = (vkc_handle)l;
	return r;
}

int32_t vkc_create_pipeline_layout(vkc_dev *d, vkc_handle set_layout, uint32_t push_bytes, vkc_handle *out) {
	VkDescriptorSetLayout sl = (VkDescriptorSetLayout)set_layout;
	VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = push_bytes};
	VkPipelineLayoutCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &sl,
		.pushConstantRangeCount = push_bytes ? 1 : 0,
		.pPushConstantRanges = push_bytes ? &pr : NULL,
	};
	VkPipelineLayout l = VK_NULL_HANDLE;
	VkResult r = d->createPipelineLayout(d->dev, &ci, NULL, &l);
	*out = (vkc_handle)l;
	return r;
}

int32_t vkc_create_compute_pipeline(vkc_dev *d, vkc_handle cache, vkc_handle module, vkc_handle layout, const uint32_t *spec, uint32_t n, uint32_t subgroup, uint32_t full, vkc_handle *out) {
	VkSpecializationMapEntry e[32];
	if (n > 32) {
		return VK_ERROR_TOO_MANY_OBJECTS;
	}
	for (uint32_t i = 0; i < n; i++) {
		e[i] = (VkSpecializationMapEntry){.constantID = i, .offset = 4 * i, .size = 4};
	}
	VkSpecializationInfo si = {.mapEntryCount = n, .pMapEntries = e, .dataSize = 4 * n, .pData = spec};
	VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rs = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
		.requiredSubgroupSize = subgroup,
	};
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.pNext = subgroup ? &rs : NULL,
			.flags = full ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT : 0,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = (VkShaderModule)module,
			.pName = "main",
			.pSpecializationInfo = n ? &si : NULL,
		},
		.layout = (VkPipelineLayout)layout,
		.basePipelineIndex = -1,
	};
	VkPipeline p = VK_NULL_HANDLE;
	VkResult r = d->createComputePipelines(d->dev, (VkPipelineCache)cache, 1, &ci, NULL, &p);
	*out = (vkc_handle)p;
	return r;
}

int32_t vkc_create_descriptor_pool(vkc_dev *d, uint32_t max_sets, const uint32_t *types, const uint32_t *counts, uint32_t n, vkc_handle *out) {
	VkDescriptorPoolSize s[8];
	if (n > 8) {
		return VK_ERROR_TOO_MANY_OBJECTS;
	}
	for (uint32_t i = 0; i < n; i++) {
		s[i] = (VkDescriptorPoolSize){.type = (VkDescriptorType)types[i], .descriptorCount = counts[i]};
	}
	VkDescriptorPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = max_sets, .poolSizeCount = n, .pPoolSizes = s};
	VkDescriptorPool p = VK_NULL_HANDLE;
	VkResult r = d->createDescriptorPool(d->dev, &ci, NULL, &p);
	*out = (vkc_handle)p;
	return r;
}

void vkc_write_set(vkc_dev *d, vkc_handle set, uint32_t n, const uint32_t *types, const vkc_handle *buffers, const uint64_t *offsets, const uint64_t *ranges, const vkc_handle *views) {
	VkWriteDescriptorSet w[32];
	VkDescriptorBufferInfo bi[32];
	VkBufferView bv[32];
	if (n > 32) {
		n = 32;
	}
	for (uint32_t i = 0; i < n; i++) {
		VkDescriptorType t = (VkDescriptorType)types[i];
		w[i] = (VkWriteDescriptorSet){
			.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
			.dstSet = (VkDescriptorSet)set,
			.dstBinding = i,
			.descriptorCount = 1,
			.descriptorType = t,
		};
		if (t == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER || t == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER) {
			bv[i] = (VkBufferView)views[i];
			w[i].pTexelBufferView = &bv[i];
		} else {
			bi[i] = (VkDescriptorBufferInfo){.buffer = (VkBuffer)buffers[i], .offset = offsets[i], .range = ranges[i]};
			w[i].pBufferInfo = &bi[i];
		}
	}
	d->updateDescriptorSets(d->dev, n, w, 0, NULL);
}

void vkc_cmd_barrier(vkc_dev *d, vkc_handle cb, int32_t host) {
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | (host ? VK_ACCESS_HOST_READ_BIT : 0),
	};
	VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
	d->cmdPipelineBarrier((VkCommandBuffer)cb, stages, stages | (host ? VK_PIPELINE_STAGE_HOST_BIT : 0), 0, 1, &mb, 0, NULL, 0, NULL);
}

void vkc_cmd_copy(vkc_dev *d, vkc_handle cb, vkc_handle src, vkc_handle dst, uint64_t src_off, uint64_t dst_off, uint64_t size) {
	VkBufferCopy c = {.srcOffset = src_off, .dstOffset = dst_off, .size = size};
	d->cmdCopyBuffer((VkCommandBuffer)cb, (VkBuffer)src, (VkBuffer)dst, 1, &c);
}

int32_t vkc_queue_submit(vkc_dev *d, vkc_handle queue, const vkc_handle *cbs, uint32_t n, vkc_handle fence) {
	VkCommandBuffer c[16];
	if (n > 16) {
		return VK_ERROR_TOO_MANY_OBJECTS;
	}
	for (uint32_t i = 0; i < n; i++) {
		c[i] = (VkCommandBuffer)cbs[i];
	}
	VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = n, .pCommandBuffers = c};
	return d->queueSubmit((VkQueue)queue, 1, &si, (VkFence)fence);
}

// The validation messenger. Messages arrive on whatever thread made the
// call, so the record is guarded.
#include <pthread.h>

#define VKC_DEBUG_KEEP 16
#define VKC_DEBUG_LEN 1024

static pthread_mutex_t debug_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t debug_count;
static int32_t debug_expected;
static char debug_msgs[VKC_DEBUG_KEEP][VKC_DEBUG_LEN];
static struct {
	VkInstance inst;
	VkDebugUtilsMessengerEXT m;
} debug_messengers[8];

static VKAPI_ATTR VkBool32 VKAPI_CALL debug_record(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
						    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
	(void)types;
	(void)user;
	const char *msg = data && data->pMessage ? data->pMessage : "(no message)";
	const char *level = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning";
	pthread_mutex_lock(&debug_mu);
	fprintf(stderr, "vulkan validation %s%s: %s\n", debug_expected ? "(expected) " : "", level, msg);
	if (debug_count < VKC_DEBUG_KEEP) {
		snprintf(debug_msgs[debug_count], VKC_DEBUG_LEN, "%s: %s", level, msg);
	}
	debug_count++;
	pthread_mutex_unlock(&debug_mu);
	return VK_FALSE; // the call itself goes on as without the layer
}

int32_t vkc_debug_open(vkc_handle instance) {
	VkInstance inst = (VkInstance)instance;
	PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)gipa(inst, "vkCreateDebugUtilsMessengerEXT");
	if (!create) {
		return VK_ERROR_EXTENSION_NOT_PRESENT;
	}
	VkDebugUtilsMessengerCreateInfoEXT ci = {
		.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
		.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
		.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		.pfnUserCallback = debug_record,
	};
	pthread_mutex_lock(&debug_mu);
	int slot = -1;
	for (int i = 0; i < 8; i++) {
		if (!debug_messengers[i].inst) {
			slot = i;
			break;
		}
	}
	pthread_mutex_unlock(&debug_mu);
	if (slot < 0) {
		return VK_ERROR_TOO_MANY_OBJECTS;
	}
	VkDebugUtilsMessengerEXT m = VK_NULL_HANDLE;
	VkResult r = create(inst, &ci, NULL, &m);
	if (r != VK_SUCCESS) {
		return r;
	}
	pthread_mutex_lock(&debug_mu);
	debug_messengers[slot].inst = inst;
	debug_messengers[slot].m = m;
	pthread_mutex_unlock(&debug_mu);
	return VK_SUCCESS;
}

void vkc_debug_close(vkc_handle instance) {
	VkInstance inst = (VkInstance)instance;
	PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)gipa(inst, "vkDestroyDebugUtilsMessengerEXT");
	pthread_mutex_lock(&debug_mu);
	for (int i = 0; i < 8; i++) {
		if (debug_messengers[i].inst == inst) {
			if (destroy) {
				destroy(inst, debug_messengers[i].m, NULL);
			}
			debug_messengers[i].inst = NULL;
			debug_messengers[i].m = VK_NULL_HANDLE;
		}
	}
	pthread_mutex_unlock(&debug_mu);
}

uint32_t vkc_debug_take(char *buf, uint32_t len, uint32_t max) {
	pthread_mutex_lock(&debug_mu);
	uint32_t n = debug_count;
	for (uint32_t i = 0; i < n && i < max && i < VKC_DEBUG_KEEP; i++) {
		snprintf(buf + (size_t)i * len, len, "%s", debug_msgs[i]);
	}
	debug_count = 0;
	pthread_mutex_unlock(&debug_mu);
	return n;
}

void vkc_debug_expect(int32_t on) {
	pthread_mutex_lock(&debug_mu);
	debug_expected = on;
	pthread_mutex_unlock(&debug_mu);
}

int32_t vkc_instance_has_extension(const char *name) {
	PFN_vkEnumerateInstanceExtensionProperties f =
		(PFN_vkEnumerateInstanceExtensionProperties)gipa(NULL, "vkEnumerateInstanceExtensionProperties");
	uint32_t n = 0;
	if (!f || f(NULL, &n, NULL) != VK_SUCCESS || n == 0) {
		return 0;
	}
	VkExtensionProperties *p = calloc(n, sizeof *p);
	if (!p) {
		return 0;
	}
	int32_t found = 0;
	if (f(NULL, &n, p) >= 0) { // VK_INCOMPLETE still lists n of them
		for (uint32_t i = 0; i < n && !found; i++) {
			found = strcmp(p[i].extensionName, name) == 0;
		}
	}
	free(p);
	return found;
}

int32_t vkc_device_has_extension(vkc_handle instance, vkc_handle phys, const char *name) {
	PFN_vkEnumerateDeviceExtensionProperties f =
		(PFN_vkEnumerateDeviceExtensionProperties)gipa((VkInstance)instance, "vkEnumerateDeviceExtensionProperties");
	uint32_t n = 0;
	if (!f || f((VkPhysicalDevice)phys, NULL, &n, NULL) != VK_SUCCESS || n == 0) {
		return 0;
	}
	VkExtensionProperties *p = calloc(n, sizeof *p);
	if (!p) {
		return 0;
	}
	int32_t found = 0;
	if (f((VkPhysicalDevice)phys, NULL, &n, p) >= 0) {
		for (uint32_t i = 0; i < n && !found; i++) {
			found = strcmp(p[i].extensionName, name) == 0;
		}
	}
	free(p);
	return found;
}
