#!/bin/sh
# Compiles every shaders/*.comp into shaders/spv/<name>.spv. A kernel family
# with per-variant defines lists them in a line of its source:
#     // variants: NAME:DEFINES NAME:DEFINES ...
# (DEFINES comma-separated), producing spv/NAME.spv for each.
# Output is deterministic for a given glslc, so CI can compare the committed
# SPIR-V with a fresh build. Any failure stops the build with a message.
set -eu
cd "$(dirname "$0")"
command -v glslc >/dev/null 2>&1 || { echo "build.sh: glslc not found (install glslc or shaderc)" >&2; exit 1; }
mkdir -p spv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="--target-env=vulkan1.2 -O -Werror -I ."
# One line per kernel (output name, source, defines), compiled in parallel:
# each variant is a kernel of its own, 143 kernels from 25 sources, too
# many to compile one at a time (the last line printed counts them).
jobs="$tmp/jobs"
: >"$jobs"
for src in *.comp; do
	base=${src%.comp}
	variants=$(sed -n 's|^// variants:||p' "$src")
	if [ -z "$variants" ]; then
		echo "$base $src" >>"$jobs"
		continue
	fi
	for v in $variants; do
		name=${v%%:*}
		defs=""
		if [ "$name" != "$v" ]; then
			for d in $(echo "${v#*:}" | tr ',' ' '); do defs="$defs -D$d"; done
		fi
		echo "$name $src$defs" >>"$jobs"
	done
done
n=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
# shellcheck disable=SC2016 # $0.. are the job's words, expanded by the inner sh
xargs -P "$n" -L 1 sh -c 'name=$1 src=$2; shift 2
	glslc '"$flags"' "$@" -o "'"$tmp"'/$name.spv" "$src" || { echo "build.sh: compiling $src as $name ($*) failed" >&2; exit 255; }' sh <"$jobs" ||
	{ echo "build.sh: compiling failed" >&2; exit 1; }
# Replace the outputs only when everything compiled, and drop stale files.
rm -f spv/*.spv
cp "$tmp"/*.spv spv/
echo "build.sh: $(ls spv/*.spv | wc -l) kernels in shaders/spv"
