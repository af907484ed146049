#!/bin/sh
# Installs the system packages vkchat needs when they are missing: the Vulkan
# loader and headers (cgo compiles against vulkan.h; the binary opens the
# loader at run time), a Vulkan driver that always works (Mesa's lavapipe
# CPU driver on Linux, MoltenVK on macOS), glslc for `make shaders`, tmux
# for the terminal smoke test (WITH_TMUX=1) and the Khronos validation layer
# (WITH_VALIDATION=1). Safe to run repeatedly.
#
# Package managers: apt (Debian, Ubuntu), dnf (Fedora), pacman (Arch),
# zypper (openSUSE) and Homebrew (macOS). DEPS_PM=apt|dnf|pacman|zypper|brew
# picks one; DEPS_DRY_RUN=1 prints the install command instead of running it.
# Where none is found the script says what to install and goes on: the
# build may still work with packages installed by hand.
set -eu

pm="${DEPS_PM:-}"
if [ -z "$pm" ]; then
	if [ "$(uname -s 2>/dev/null)" = Darwin ]; then
		command -v brew >/dev/null 2>&1 && pm=brew
	else
		for c in apt-get:apt dnf:dnf pacman:pacman zypper:zypper brew:brew; do
			if command -v "${c%%:*}" >/dev/null 2>&1; then
				pm="${c#*:}"
				break
			fi
		done
	fi
fi

# Per manager: the packages, and how to ask whether one is installed.
case "$pm" in
apt)
	pkgs="libvulkan-dev mesa-vulkan-drivers glslc"
	validation=vulkan-validationlayers
	installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
	;;
dnf)
	pkgs="vulkan-loader-devel vulkan-headers mesa-vulkan-drivers glslc"
	validation=vulkan-validation-layers
	installed() { rpm -q "$1" >/dev/null 2>&1; }
	;;
pacman)
	pkgs="vulkan-icd-loader vulkan-headers vulkan-swrast shaderc"
	validation=vulkan-validation-layers
	installed() { pacman -Q "$1" >/dev/null 2>&1; }
	;;
zypper)
	pkgs="vulkan-devel libvulkan_lvp shaderc"
	validation=vulkan-validationlayers
	installed() { rpm -q "$1" >/dev/null 2>&1; }
	;;
brew)
	pkgs="molten-vk vulkan-loader vulkan-headers shaderc"
	validation=vulkan-validationlayers
	installed() { brew list --versions "$1" >/dev/null 2>&1; }
	;;
"")
	echo "deps: no supported package manager found (apt, dnf, pacman, zypper, brew)." >&2
	echo "deps: install by hand: the Vulkan loader and its headers (vulkan.h), a Vulkan driver" >&2
	echo "deps: (Mesa's lavapipe works on any CPU; MoltenVK on macOS) and glslc (from shaderc)." >&2
	echo "deps: Without a Vulkan loader vkchat still runs with --backend cpu." >&2
	pkgs=""
	;;
*)
	echo "deps: DEPS_PM=$pm is not one of apt, dnf, pacman, zypper, brew" >&2
	exit 2
	;;
esac

if [ -n "$pm" ]; then
	[ "${WITH_TMUX:-0}" = 1 ] && pkgs="$pkgs tmux"
	[ "${WITH_VALIDATION:-0}" = 1 ] && pkgs="$pkgs $validation"
	missing=""
	for p in $pkgs; do
		installed "$p" || missing="$missing $p"
	done
fi

# run prints a command under DEPS_DRY_RUN=1 (or when it cannot be run),
# runs it otherwise.
run() {
	if [ "$dry" = 1 ]; then
		echo "  $*" >&2
	else
		"$@" >/dev/null
	fi
}

if [ -n "$pm" ] && [ -n "$missing" ]; then
	dry="${DEPS_DRY_RUN:-0}"
	# Homebrew refuses to run as root; the others need it.
	sudo=""
	if [ "$pm" != brew ] && [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1; then
			sudo="sudo"
		else
			echo "deps: missing:$missing; sudo is not installed, so run as root:" >&2
			dry=1
			cannot=1
		fi
	fi
	[ "$dry" = 1 ] || echo "deps: installing$missing with $pm"
	# shellcheck disable=SC2086 # $sudo and $missing split on purpose
	case "$pm" in
	apt)
		run $sudo apt-get update -qq
		run $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
		;;
	dnf) run $sudo dnf install -y -q $missing ;;
	pacman) run $sudo pacman -S --needed --noconfirm $missing ;;
	zypper) run $sudo zypper --non-interactive install $missing ;;
	brew) run brew install $missing ;;
	esac
	[ "${cannot:-0}" = 1 ] && exit 1
fi

if ! command -v go >/dev/null 2>&1; then
	echo "deps: the Go toolchain (1.26 or newer) is required and was not found on PATH" >&2
	exit 1
fi
