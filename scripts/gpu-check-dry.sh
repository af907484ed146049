#!/bin/sh
# CI's test of scripts/gpu-check.sh (make gpu-check-dry): its dry run on
# lavapipe must exit non-zero because the device is a CPU, name the CPU
# device as the reason, and still run every later step at its small scale,
# within a tight budget; the real run must stop at the device check. Needs
# bin/vkchat, bin/vulkan.test and bin/vk.test built first.
set -u
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
GPU_CHECK_BUDGET=${GPU_CHECK_BUDGET:-150} sh scripts/gpu-check.sh --dry-run "$out/run" >"$out/stdout" 2>&1
rc=$?
sum=$out/run/summary.txt
bad=0
no() {
	echo "gpu-check-dry: $*" >&2
	bad=1
}
[ $rc != 0 ] || no "the dry run exited 0 on a CPU device"
grep -q '^FAIL: devices' "$sum" || no "the device check did not fail"
grep -q 'no GPU: the chosen Vulkan device .*a cpu device' "$sum" || no "the failure does not name the CPU device"
for s in vulkan-tests vk-tests synth-8b 1b-d0 1b-d64 8b-d0 8b-d64 1b-matmul-float 1b-matmul-intdot 8b-matmul-float 8b-matmul-intdot head-on head-off; do
	grep -q "^$s: exit 0 " "$sum" || no "step $s did not run to a clean exit"
done
grep -q 'kernels .* ms of .* ms wall per token' "$sum" || no "no kernel-time against wall-time line"
grep -q 'read bandwidth .* via texel fetches .* via storage-buffer loads' "$sum" || no "no texel against storage-buffer bandwidth line"
grep -q 'pp16 @ d64' "$sum" || no "no prefill at depth"
grep -q '^ *attention (attention) .*%' "$sum" || no "no per-kernel share in the profile tables"
n=$(grep -c '^FAIL' "$sum")
[ "$n" = 1 ] || no "$n failures, want only the device's"
# --quick: the figures without the tests or the head on/off
GPU_CHECK_BUDGET=${GPU_CHECK_BUDGET:-150} sh scripts/gpu-check.sh --dry-run --quick "$out/quick" >"$out/quick.stdout" 2>&1
qsum=$out/quick/summary.txt
for s in 1b-d0 1b-d64 8b-d0 8b-d64; do
	grep -q "^$s: exit 0 " "$qsum" || no "--quick: step $s did not run to a clean exit"
done
! grep -q '^\(vk-tests\|vulkan-tests\|head-on\):' "$qsum" || no "--quick ran the tests or the head on/off"
n=$(grep -c '^FAIL' "$qsum")
[ "$n" = 1 ] || no "--quick: $n failures, want only the device's"
# Without --dry-run the check stops at the device, before measuring anything.
GPU_CHECK_BUDGET=60 sh scripts/gpu-check.sh "$out/real" >"$out/real.stdout" 2>&1
rc=$?
[ $rc != 0 ] || no "the real run exited 0 on a CPU device"
grep -q 'FAILED before any measurement' "$out/real/summary.txt" || no "the real run did not stop at the device check"
[ ! -e "$out/real/vk-tests.txt" ] || no "the real run went on to the tests on a CPU device"
if [ $bad != 0 ]; then
	cat "$out/stdout" "$out/quick.stdout" >&2
	exit 1
fi
echo "gpu-check-dry: the dry run fails on $(sed -n 's/^device: //p' "$sum") as it must, after running every step ($(sed -n 's/^gpu-check: .* in //p' "$sum"), --quick $(sed -n 's/^gpu-check: .* in //p' "$qsum"))"
