#!/bin/sh
# The real-GPU check of the Vulkan runtime, for the device tool's machine
# (x86-64, no Go there). Prepare here with scripts/gpu-check-prep.sh (the
# binaries in bin/: vkchat and the test binaries of runtime/vk/vulkan and
# runtime/vk, vulkan.test and vk.test; a subset of ../shared in .gpucheck/, the loader debs in
# .gl/), then run it there in one call; README's "Real GPUs" section has the
# exact call.
#
#     sh scripts/gpu-check.sh [--quick] OUTDIR            # on the device machine
#     sh scripts/gpu-check.sh --dry-run [--quick] OUTDIR  # here, on lavapipe
#
# It cannot report a CPU driver or a missing loader as a GPU result:
#   - set-up: unpacks the carried loader debs when no libvulkan.so.1 is
#     installed, and points VK_DRIVER_FILES at the NVIDIA ICD when it exists;
#   - `vkchat devices --require-gpu` must pass: the device every later step
#     picks must be a discrete or integrated GPU, else the run stops, exit 1;
#   - a skipped test counts as a failure, and so does a step that times out;
#   - the whole run fits GPU_CHECK_BUDGET seconds (default 540, inside the
#     device tool's 10-minute command): each step is cut to what is left.
# What a first real run must tell (issue 23), measured first:
#   - the device (heaps, limits, subgroup sizes, compute units) and its read
#     bandwidth through texel fetches against storage-buffer loads;
#   - on a generated 1B and 8B (Llama 3 geometry) Q4_0 model, pp512 and
#     tg128 at depth 0 and 4,096 (`bench --depth` starts both there), each
#     with the per-dispatch profile: every kernel's time, its share of the
#     step and its bytes (GB/s against the bound) and FLOPs, and the decode
#     step's kernel time against its wall time;
#   - both shapes' pp512 with the tiled product (VKCHAT_VK_MATMUL=float and
#     =intdot) against the mat-vec the layout ships with;
#   - the 1B's decode with the integer-dot mat-vec (VKCHAT_VK_MATVEC=intdot)
#     against the float kernels the layout ships with, and with the fence
#     waited for by sleeping only (VKCHAT_VK_SPIN=off) against polling,
#     and with the rotation in a dispatch of its own (VKCHAT_VK_ROPE=separate)
#     against the QKV product's epilogue;
#   - decode with the device head on and off (1B);
# then the Vulkan layer's tests and the kernel and end-to-end tests.
# Every result is under OUTDIR; summary.txt says what passed, with the
# figures.
#
# --quick keeps the measurements (one repetition each, no head on/off) and
# drops the tests: the figures within a few minutes of device time.
#
# --dry-run skips the set-up and runs every step at a small scale
# (stories260K as the "1B", synth's tiny shape as the "8B", position 64 for
# the "deep" tests, a few kernel tests) so that the script itself is
# exercised on lavapipe; it still exits 1, because the device is a CPU.
# `make gpu-check-dry` checks exactly that, with and without --quick.
set -u
dry=0
quick=0
while :; do
	case "${1:-}" in
	--dry-run) dry=1 ;;
	--quick) quick=1 ;;
	*) break ;;
	esac
	shift
done
out=${1:-gpu-check}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
root=$(pwd)
budget=${GPU_CHECK_BUDGET:-540}
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
mode=full
[ $quick = 0 ] || mode=quick
say "gpu-check ($mode) $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), budget ${budget}s, shared data ${VKCHAT_SHARED:-(none)}"

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
	deep=4096
	pp=512
	n=128
else
	say "dry run: no set-up, small scale; the device check must fail on a CPU driver"
	tests='TestHeadKernel|TestRopeKV|TestDevices'
	notrun='^$'
	deep=64
	pp=16
	n=4
fi
reps=2
[ $quick = 0 ] || reps=1

# 1. The device: every later step opens the device this one names.
if ! step devices 30 "$bin/vkchat" devices --require-gpu; then
	grep -h 'chosen\|no GPU' "$out/devices.txt" | sed 's/^/  /' | tee -a "$sum"
	if [ $dry = 0 ]; then
		say "gpu-check: FAILED before any measurement: not a GPU"
		exit 1
	fi
fi
sed -n 's/^chosen: /device: /p' "$out/devices.txt" | tee -a "$sum"

# 2. The figures: per shape a generated Q4_0 model (the dry run's "1b" is
#    stories260K, its "8b" synth's tiny shape), pp and tg at depth 0 and
#    $deep, each with the profile. Each bench line in the summary is test,
#    tok/s and of bound; then the profile's kernel tables.
bench() {
	name=$1
	want=$2
	shift 2
	step "$name" "$want" "$bin/vkchat" bench --model "$model" --backend vulkan "$@" || return
	grep -h '^ *|' "$out/$name.txt" | grep -v '| *model|\|| *---' | awk -F'|' '{print " " $7 " " $8 " " $9}' | tr -s ' ' | tee -a "$sum"
	grep -h 'dispatches, \|kernels .* wall\|bound: ' "$out/$name.txt" | grep -v '^decode step\|^prefill chunk' | sed 's/^ */  /' | tee -a "$sum"
	if [ -z "${bw:-}" ]; then
		bw=$(grep -h '^read bandwidth' "$out/$name.txt")
		[ -z "$bw" ] || say "$bw"
	fi
	# the profile's tables: each kernel's time, share, bytes and FLOPs
	awk '/^(decode step at|prefill chunk of)/ {p = 1} p && /^$/ {p = 0} p' "$out/$name.txt" | sed 's/^/  /' >>"$sum"
}
vocab=${vocab:-$VKCHAT_SHARED/vocab/ggml-vocab-llama-spm.gguf}
for shape in 1b 8b; do
	model=/tmp/gpu-check-$shape-Q4_0.gguf
	if [ $dry = 1 ] && [ $shape = 1b ]; then
		model=$VKCHAT_SHARED/models/stories260K.gguf
		[ -f "$model" ] || model=$root/models/demo/stories260K.gguf
	else
		gen=$shape
		[ $dry = 0 ] || gen=tiny
		# 8B: ~7.2G random weights quantized on one core (~70M/s here)
		step "synth-$shape" $([ $shape = 8b ] && echo 240 || echo 60) "$bin/vkchat" synth --shape $gen --type Q4_0 --vocab "$vocab" --out "$model" || model=
	fi
	if [ -z "$model" ] || [ ! -f "$model" ]; then
		fail "no $shape model to bench"
		continue
	fi
	bench $shape-d0 $([ $shape = 8b ] && echo 120 || echo 60) -p $pp -n $n -r $reps --profile
	bench $shape-d$deep $([ $shape = 8b ] && echo 150 || echo 90) -p $pp -n $n -r $reps --depth $deep --profile
	# prefill with the tiled product (off in the GPU layout until this
	# figure says it beats the mat-vec: tuning.matmul), its sums as floats
	# and as packed int8 dot products (tuning.mmDot)
	for mm in float intdot; do
		export VKCHAT_VK_MATMUL=$mm
		bench $shape-matmul-$mm $([ $shape = 8b ] && echo 90 || echo 45) -p $pp -n 0 -r $reps --profile
	done
	unset VKCHAT_VK_MATMUL
	if [ $shape = 1b ]; then
		# decode with the integer-dot mat-vec, off by default until this
		# figure says whether it beats the float kernels (tuning.intDot)
		export VKCHAT_VK_MATVEC=intdot
		bench $shape-intdot 45 -p 0 -n $n -r $reps --profile
		unset VKCHAT_VK_MATVEC
		# and with the fence waited for by sleeping only (the layout polls
		# near each step's expected end: vulkan/fencewait.go)
		export VKCHAT_VK_SPIN=off
		bench $shape-nospin 45 -p 0 -n $n -r $reps
		unset VKCHAT_VK_SPIN
		# and with rope.comp after the QKV product instead of its
		# epilogue (tuning.ropeInQKV: one dispatch fewer per layer)
		export VKCHAT_VK_ROPE=separate
		bench $shape-rope-separate 45 -p 0 -n $n -r $reps
		unset VKCHAT_VK_ROPE
	fi
	if [ $shape = 1b ] && [ $quick = 0 ]; then
		bench head-on 45 -p 0 -n $n -r 3 --head on
		bench head-off 45 -p 0 -n $n -r 3 --head off
	fi
	case $model in /tmp/gpu-check-*) rm -f "$model" ;; esac
done

# 3. The Vulkan tests, both packages (not with --quick): the generic layer's (vulkan.test:
#    devices, memory, barriers, faults) and the kernel and end-to-end tests
#    of the forward pass (vk.test); a skip is a failure.
[ "$notrun" = '^$' ] || [ $quick = 1 ] || say "vulkan-tests, vk-tests: not run (named): $notrun"
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
if [ $quick = 0 ]; then
	tests_step vulkan-tests 40 "$bin/vulkan.test"
	tests_step vk-tests 200 "$bin/vk.test"
fi

say "gpu-check: $failures failures in $(($(date +%s) - t0))s"
[ $failures = 0 ]
