#!/bin/sh
# The real-GPU check of the Vulkan runtime, for the device tool's machine
# (x86-64, no Go there). Prepare here with scripts/gpu-check-prep.sh (the
# binaries in bin/: vkchat and the test binaries of runtime/vk/vulkan and
# runtime/vk, vulkan.test and vk.test; a subset of ../shared in .gpucheck/, the loader debs in
# .gl/), then run it there in one call; README's "Real GPUs" section has the
# exact call.
#
#     sh scripts/gpu-check.sh OUTDIR            # on the device machine
#     sh scripts/gpu-check.sh --dry-run OUTDIR  # here, on lavapipe
#
# It cannot report a CPU driver or a missing loader as a GPU result:
#   - set-up: unpacks the carried loader debs when no libvulkan.so.1 is
#     installed, and points VK_DRIVER_FILES at the NVIDIA ICD when it exists;
#   - `vkchat devices --require-gpu` must pass: the device every later step
#     picks must be a discrete or integrated GPU, else the run stops, exit 1;
#   - a skipped test counts as a failure, and so does a step that times out;
#   - the whole run fits GPU_CHECK_BUDGET seconds (default 480, inside the
#     device tool's 10-minute command): each step is cut to what is left.
# It records the device (heaps, limits, subgroup sizes), the Vulkan layer's
# tests, the kernel and end-to-end tests, and on a generated 1B Q4_0 model the per-dispatch
# profile (kernel time against wall time per token) with decode near
# position 0 and near 1,500, and decode with the device head on and off.
# Every result is under OUTDIR; summary.txt says what passed.
#
# --dry-run skips the set-up and runs every step at a small scale
# (stories260K for the model, a few kernel tests, position 64 for the
# "deep" decode) so that the script itself is exercised on lavapipe; it
# still exits 1, because the device is a CPU. `make gpu-check-dry` checks
# exactly that.
set -u
dry=0
if [ "${1:-}" = --dry-run ]; then
	dry=1
	shift
fi
out=${1:-gpu-check}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
root=$(pwd)
budget=${GPU_CHECK_BUDGET:-480}
t0=$(date +%s)
sum="$out/summary.txt"
: >"$sum"
failures=0

say() { echo "$*" | tee -a "$sum"; }
fail() {
	say "FAIL: $*"
	failures=$((failures + 1))
}
left() { echo $((budget - ($(date +%s) - t0))); }

# step NAME SECONDS CMD...: runs CMD with its output in OUTDIR/NAME.txt,
# cut to the budget left; a non-zero exit or a timeout is a failure.
step() {
	name=$1
	want=$2
	shift 2
	l=$(left)
	if [ "$l" -le 5 ]; then
		fail "$name: not run, the ${budget}s budget is spent"
		return 1
	fi
	lim=$((want < l ? want : l))
	s=$(date +%s)
	timeout -k 5 "$lim" "$@" >"$out/$name.txt" 2>&1
	rc=$?
	say "$name: exit $rc after $(($(date +%s) - s))s (limit ${lim}s)"
	case $rc in
	0) return 0 ;;
	124 | 137) fail "$name: timed out after ${lim}s" ;;
	*) fail "$name: exit $rc (see $name.txt)" ;;
	esac
	return 1
}

bin=$root/bin
for f in "$bin/vkchat" "$bin/vulkan.test" "$bin/vk.test"; do
	[ -x "$f" ] || fail "$f is missing: run scripts/gpu-check-prep.sh before carrying bin/"
done
[ $failures = 0 ] || exit 1
if [ -z "${VKCHAT_SHARED:-}" ]; then
	# what gpu-check-prep.sh carried, else the data beside a checkout
	for d in "$root/.gpucheck/shared" "$root/../shared"; do
		if [ -d "$d" ]; then
			VKCHAT_SHARED=$(cd "$d" && pwd)
			break
		fi
	done
fi
export VKCHAT_SHARED="${VKCHAT_SHARED:-$root/.gpucheck/shared}"
say "gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), budget ${budget}s, shared data ${VKCHAT_SHARED:-(none)}"

if [ $dry = 0 ]; then
	if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
		if ls "$root"/.gl/*.deb >/dev/null 2>&1; then
			for f in "$root"/.gl/*.deb; do dpkg -x "$f" /; done
			ldconfig
			say "set-up: unpacked the carried loader debs (.gl)"
		else
			say "set-up: no libvulkan.so.1 and no .gl/*.deb to unpack"
		fi
	fi
	icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
	if [ -f "$icd" ]; then
		export VK_DRIVER_FILES="$icd"
		say "set-up: VK_DRIVER_FILES=$icd"
	fi
	vocab=$VKCHAT_SHARED/vocab/ggml-vocab-llama-spm.gguf
	tests='.'
	# Not run there, by name: the validation layer is not installed on the
	# device machine, and these synth-<arch> files do not fit the carry.
	notrun='TestValidationRecords|TestArchsMatchCPU|TestWindowRingRewind'
	deep=1500
	n=32
else
	say "dry run: no set-up, small scale; the device check must fail on a CPU driver"
	tests='TestHeadKernel|TestRopeKV|TestDevices'
	notrun='^$'
	deep=64
	n=4
fi

# 1. The device: every later step opens the device this one names.
if ! step devices 30 "$bin/vkchat" devices --require-gpu; then
	grep -h 'chosen\|no GPU' "$out/devices.txt" | sed 's/^/  /' | tee -a "$sum"
	if [ $dry = 0 ]; then
		say "gpu-check: FAILED before any measurement: not a GPU"
		exit 1
	fi
fi
sed -n 's/^chosen: /device: /p' "$out/devices.txt" | tee -a "$sum"

# 2. The Vulkan tests, both packages: the generic layer's (vulkan.test:
#    devices, memory, barriers, faults) and the kernel and end-to-end tests
#    of the forward pass (vk.test); a skip is a failure.
[ "$notrun" = '^$' ] || say "vulkan-tests, vk-tests: not run (named): $notrun"
tests_step() {
	name=$1
	want=$2
	shift 2
	step "$name" "$want" "$@" -test.v -test.count=1 -test.timeout $((want - 5))s -test.run "$tests" -test.skip "$notrun"
	skips=$(grep -c -- '--- SKIP' "$out/$name.txt")
	passes=$(grep -c -- '--- PASS' "$out/$name.txt")
	say "$name: $passes passed (with subtests), $skips skipped"
	if [ "$skips" != 0 ]; then
		grep -h -A1 -- '--- SKIP' "$out/$name.txt" | sed 's/^/  /' | head -10 | tee -a "$sum"
		fail "$name: $skips skipped tests"
	fi
	[ "$passes" != 0 ] || fail "$name: nothing passed"
}
tests_step vulkan-tests 40 "$bin/vulkan.test"
tests_step vk-tests 200 "$bin/vk.test"

# 3. The model: a generated 1B Q4_0 (stories260K in a dry run).
if [ $dry = 0 ]; then
	model=/tmp/gpu-check-1b-Q4_0.gguf
	step synth 60 "$bin/vkchat" synth --shape 1b --type Q4_0 --vocab "$vocab" --out "$model" || model=
else
	model=$VKCHAT_SHARED/models/stories260K.gguf
	[ -f "$model" ] || model=$root/models/demo/stories260K.gguf
fi

# 4. Profile and decode near position 0 and near $deep; the device head on
#    and off. Each bench line in the summary is test, tok/s and of bound.
bench() {
	name=$1
	shift
	step "$name" 75 "$bin/vkchat" bench --model "$model" --backend vulkan "$@" || return
	grep -h '^ *|' "$out/$name.txt" | grep -v '| *model|\|| *---' | awk -F'|' '{print " " $7 " " $8 " " $9}' | tr -s ' ' | tee -a "$sum"
	grep -h 'dispatches, \|kernels .* wall\|bound: ' "$out/$name.txt" | sed 's/^ */  /' | tee -a "$sum"
}
if [ -n "${model:-}" ] && [ -f "$model" ]; then
	bench profile-d0 -p 64 -n "$n" -r 2 --profile
	bench profile-d$deep -p 0 -n "$n" -r 2 --depth "$deep" --profile
	bench head-on -p 0 -n $((2 * n)) -r 3 --head on
	bench head-off -p 0 -n $((2 * n)) -r 3 --head off
else
	fail "no model to bench"
fi
[ $dry = 0 ] && rm -f /tmp/gpu-check-1b-Q4_0.gguf

say "gpu-check: $failures failures in $(($(date +%s) - t0))s"
[ $failures = 0 ]
