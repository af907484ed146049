#!/bin/sh
# Prepares what scripts/gpu-check.sh needs on the device tool's machine,
# which has no Go and no ../shared: the binaries (bin/vkchat and the test
# binaries of the two Vulkan packages, bin/vulkan.test for runtime/vk/vulkan
# and bin/vk.test for runtime/vk, stripped, built here for x86-64), a subset of the shared data
# (.gpucheck/shared: stories260K, some synthetic models and their
# llama.cpp dumps, the llama vocabulary for `vkchat synth`) and the
# Vulkan loader debs (.gl, as the device tool's README says). All three are
# ignored by git and named in the call's carry list (README, "Real GPUs").
set -eu
cd "$(dirname "$0")/.."
[ "$(uname -m)" = x86_64 ] || { echo "gpu-check-prep: build on x86-64: the device machine runs x86-64 binaries" >&2; exit 1; }
shared=${VKCHAT_SHARED:-../shared}
go build -trimpath -ldflags='-s -w' -o bin/vkchat ./cmd/vkchat
go test -c -trimpath -ldflags='-s -w' -o bin/vulkan.test ./runtime/vk/vulkan
go test -c -trimpath -ldflags='-s -w' -o bin/vk.test ./runtime/vk
rm -rf .gpucheck
mkdir -p .gpucheck/shared/models .gpucheck/shared/reference .gpucheck/shared/vocab
cp models/demo/stories260K.gguf .gpucheck/shared/models/ 2>/dev/null || cp "$shared/models/stories260K.gguf" .gpucheck/shared/models/
cp testdata/reference/stories260K.*.json .gpucheck/shared/reference/ 2>/dev/null || cp "$shared"/reference/stories260K.*.json .gpucheck/shared/reference/
# Within the device tool's 64 MiB: a few weight types for
# TestSynthLogitsMatchCPU, and the two architectures the GPU layout test
# runs (the other synth-<arch> files are left: gpu-check.sh names the
# tests that need them as not run).
for t in F16 Q4_0 Q8_0 Q4_K_M Q6_K gemma2-F32 qwen3-F32; do
	cp "$shared/models/synth-$t.gguf" .gpucheck/shared/models/
	cp "$shared/reference/synth-$t.json" .gpucheck/shared/reference/ 2>/dev/null || true
done
cp "$shared/vocab/ggml-vocab-llama-spm.gguf" .gpucheck/shared/vocab/
if ! ls .gl/*.deb >/dev/null 2>&1; then
	mkdir -p .gl /tmp/amd64/partial
	o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
	apt-get $o update -qq
	(cd .gl && apt-get $o download libvulkan1)
fi
du -sh bin/vkchat bin/vulkan.test bin/vk.test .gpucheck .gl
total=$(du -sck bin/vkchat bin/vulkan.test bin/vk.test .gpucheck .gl | tail -1 | cut -f1)
if [ "$total" -gt $((60 * 1024)) ]; then
	echo "gpu-check-prep: ${total} KiB to carry, over the device tool's 64 MiB working-tree limit with the repository" >&2
	exit 1
fi
echo "gpu-check-prep: ready (${total} KiB to carry: bin/vkchat bin/vulkan.test bin/vk.test .gpucheck .gl)"
