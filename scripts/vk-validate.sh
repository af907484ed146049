#!/bin/sh
# Runs the Vulkan tests once under the Khronos validation layer, with its
# synchronization validation, and fails on any message it reports.
#
# VKCHAT_VALIDATION=1 makes every instance enable VK_LAYER_KHRONOS_validation
# and a debug-utils messenger (runtime/vk/vulkan/validation.go) that prints each
# message as "vulkan validation error|warning: ..." and makes Device.Close
# fail; TestValidationRecords provokes two messages on purpose (printed as
# "vulkan validation (expected) ...") to prove the layer and the messenger
# are live. This script fails when
#   - the layer is not installed (scripts/deps.sh installs it with
#     WITH_VALIDATION=1),
#   - any test fails, or the Vulkan tests were skipped,
#   - any message other than the expected ones was printed.
# Cost: the whole runtime/vk/... suite (the generic layer runtime/vk/vulkan
# and the forward pass runtime/vk) takes about 6 minutes under validation on
# a shared 2-core lavapipe machine, two thirds of it in three tests that
# compile every weight type's kernels (TestMatvecSplitK, TestMatvecTypes,
# TestSynthLogitsMatchCPU): they record and submit exactly as the others
# do, so they are left out by default (VKCHAT_VALIDATE_SKIP='' keeps them);
# VKCHAT_VALIDATE_RUN narrows runtime/vk/... further, and the engine's two
# end-to-end Vulkan tests (sessions, the device head) always run.
set -u
cd "$(dirname "$0")/.."
if ! ls /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ${VK_LAYER_PATH:+"$VK_LAYER_PATH"/VkLayer_khronos_validation.json} >/dev/null 2>&1; then
	echo "vk-validate: VK_LAYER_KHRONOS_validation is not installed (apt-get install vulkan-validationlayers, or WITH_VALIDATION=1 sh scripts/deps.sh)" >&2
	exit 1
fi
log=${VK_VALIDATE_LOG:-$(mktemp)}
run=${VKCHAT_VALIDATE_RUN:-.}
skip=${VKCHAT_VALIDATE_SKIP-'TestMatvecSplitK|TestMatvecTypes|TestSynthLogitsMatchCPU'}
engine_run=${VKCHAT_VALIDATE_ENGINE_RUN:-'TestHeadSamplingMatchesLogits|TestStoriesMatchesLlamaCpp'}
export VKCHAT_VALIDATION=1 VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
export VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
rc=0
go test -count=1 -v -timeout 30m -run "$run" -skip "^($skip)\$" ./runtime/vk/... > "$log" 2>&1 || rc=1
go test -count=1 -v -timeout 30m -run "$engine_run" ./runtime/engine >> "$log" 2>&1 || rc=1
fail() {
	echo "vk-validate: $*" >&2
	rc=1
}
[ $rc = 0 ] || fail "tests failed under validation (log: $log)"
grep -q -- '--- PASS: TestValidationRecords' "$log" || fail "TestValidationRecords did not pass: the layer or the messenger is not live"
if grep -n -- '--- SKIP' "$log" | grep -v 'TestValidationRecords' | grep -q .; then
	grep -n -B1 -A2 -- '--- SKIP' "$log" | head -20 >&2
	fail "tests were skipped under validation"
fi
grep -q 'vulkan backend not tested' "$log" && fail "the engine tests did not run the Vulkan backend"
msgs=$(grep -c '^vulkan validation \(error\|warning\)' "$log")
if [ "$msgs" != 0 ]; then
	grep '^vulkan validation \(error\|warning\)' "$log" | cut -c1-400 | sort | uniq -c | sort -rn | head -20 >&2
	fail "$msgs validation messages"
fi
if [ $rc = 0 ]; then
	echo "vk-validate: no validation messages ($(grep -c -- '^--- PASS' "$log") top-level tests passed under validation with synchronization validation)"
fi
exit $rc
