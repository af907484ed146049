#!/bin/sh
# The real-GPU check of the Vulkan runtime, for the device tool's machine
# (no Go there): build here with
#     make build && go test -c -o bin/vk.test ./runtime/vk && go test -c -o bin/engine.test ./runtime/engine
# then run it there with bin/ and the Vulkan loader debs carried
# (see the device tool's README), e.g. `sh scripts/gpu-check.sh "$OUT"`.
# It runs the Vulkan kernel and end-to-end tests, then `vkchat bench` on
# generated models: the 110M shape in Q4_0, Q8_0 and F16 and the 1B shape
# in Q4_0, writing everything under the output folder.
set -u
out=${1:-gpu-check}
mkdir -p "$out"
shared=${VKCHAT_SHARED:-$(cd "$(dirname "$0")/.." && pwd)/../shared}
export VKCHAT_SHARED="$shared"
vocab="$shared/vocab/ggml-vocab-llama-spm.gguf"
bin/vkchat devices > "$out/devices.txt" 2>&1
(cd runtime/vk && ../../bin/vk.test -test.v -test.timeout 8m) > "$out/vk-tests.txt" 2>&1
echo "vk tests rc=$?" >> "$out/summary.txt"
(cd runtime/engine && VKCHAT_VULKAN_ALL_SYNTH=1 ../../bin/engine.test -test.v -test.run 'LlamaCpp' -test.timeout 8m) > "$out/engine-tests.txt" 2>&1
echo "engine tests rc=$?" >> "$out/summary.txt"
for m in "110m Q4_0" "110m Q8_0" "110m F16" "1b Q4_0"; do
	set -- $m
	f="/tmp/synth-$1-$2.gguf"
	bin/vkchat synth --shape "$1" --type "$2" --vocab "$vocab" --out "$f" > /dev/null 2>&1 || { echo "synth $1 $2 failed" >> "$out/summary.txt"; continue; }
	bin/vkchat bench --model "$f" --backend vulkan -r 3 --profile > "$out/bench-$1-$2.txt" 2>&1
	bin/vkchat bench --model "$f" --backend vulkan -r 3 --json > "$out/bench-$1-$2.json" 2>&1
	if [ "$1 $2" = "110m Q4_0" ]; then
		# what the on-device top-k saves against reading the vocabulary
		bin/vkchat bench --model "$f" --backend vulkan -r 3 -p 0 --head off --json > "$out/bench-$1-$2-head-off.json" 2>&1
	fi
	grep -h '"test"\|"tokens_per_second"\|"fraction_of_bound"' "$out/bench-$1-$2.json" | tr -d ' ,' | paste -sd' ' | sed "s/^/$1 $2: /" >> "$out/summary.txt"
	rm -f "$f"
done
cat "$out/summary.txt"
