#!/bin/sh
# Installs the system packages vkchat needs when they are missing: the Vulkan
# loader and headers (cgo links against libvulkan), Mesa's lavapipe CPU
# driver (so there is always a Vulkan device), glslc for `make shaders`, and
# tmux for the terminal smoke test. Safe to run repeatedly.
set -eu
pkgs="libvulkan-dev mesa-vulkan-drivers glslc"
[ "${WITH_TMUX:-0}" = 1 ] && pkgs="$pkgs tmux"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if ! command -v go >/dev/null 2>&1; then
	echo "deps: the Go toolchain (1.26 or newer) is required and was not found on PATH" >&2
	exit 1
fi
