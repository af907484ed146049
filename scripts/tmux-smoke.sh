#!/usr/bin/env bash
# tmux-smoke.sh: the real binary in a real terminal (tmux). For each window
# size it starts `vkchat chat --model demo`, sends each sample of text that
# has broken terminal layouts (Thai, Devanagari, Arabic, CJK, combining
# marks, emoji sequences, flags, a tab), lets the demo model reply, and
# checks the screen: the title bar on row 1, exactly the window's rows,
# and every row beside the side panels ending in a panel border at the
# window's right edge (a row drawn too wide would push it off or wrap).
#
#   scripts/tmux-smoke.sh [path/to/vkchat]     (tmux: WITH_TMUX=1 scripts/deps.sh)
set -euo pipefail
export LANG=C.UTF-8 LC_ALL=C.UTF-8 VKCHAT_OFFLINE=1 VKCHAT_VULKAN_LIBRARY=${VKCHAT_VULKAN_LIBRARY:-/nonexistent}
command -v tmux >/dev/null || { echo "tmux-smoke: tmux is not installed (WITH_TMUX=1 scripts/deps.sh)" >&2; exit 2; }
bin=${1:-}
work=$(mktemp -d)
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
if [[ -z $bin ]]; then
	bin=$work/vkchat
	go build -o "$bin" ./cmd/vkchat
fi
export XDG_CACHE_HOME=$work/cache XDG_STATE_HOME=$work/state

samples=(
	"น้ำ"
	"नमस्ते दुनिया"
	"مرحبا بالعالم"
	"日本語のテキスト"
	"e$(printf '\u0301') a$(printf '\u0308') o$(printf '\u0302\u0323')"
	"I ❤️ it 👍🏽"
	"👨‍👩‍👧 family"
	"🇯🇵🇫🇷 flags"
	"tab$(printf '\t')here"
)

fail=0
sock=vkchat-smoke-$$
sock=vkchat-smoke-$$
t() { tmux -L "$sock" "$@"; }

# wait_ready waits until the title bar says the model is ready again.
wait_ready() {
	for _ in $(seq 1 300); do
		local screen
		screen=$(t capture-pane -p -t smoke)
		# No pipes into head or grep -q: under pipefail a writer cut off
		# early fails the test.
		if [[ ${screen%%$'\n'*} == *"● ready"* ]]; then
			return 0
		fi
		sleep 0.1
	done
	echo "tmux-smoke: $1: the chat did not become ready" >&2
	return 1
}

check() {
	local what=$1 w=$2 h=$3
	local screen rows
	screen=$(t capture-pane -p -t smoke)
	# $(...) drops trailing blank rows: fewer rows than the window means
	# the footer left the last row (the screen scrolled or was cut).
	rows=$(printf '%s\n' "$screen" | wc -l)
	if [[ $rows -ne $h ]]; then
		echo "FAIL $what: the last non-blank row is $rows of $h (the footer is not on the last row)" >&2
		fail=1
	fi
	if [[ ${screen%%$'\n'*} != " vkchat │"* ]]; then
		echo "FAIL $what: the title bar is not on row 1:" >&2
		printf '%s\n' "$screen" | head -3 >&2
		fail=1
	fi
	# Rows 2.. of a wide layout hold the panels: each that shows a panel
	# must end with its right border in the last column.
	if [[ $w -ge 100 ]]; then
		local n=0
		while IFS= read -r line; do
			n=$((n + 1))
			[[ $n -eq 1 ]] && continue
			[[ $line == *"│"* || $line == *"╭"* || $line == *"╰"* ]] || continue
			case $line in
			*"│" | *"╮" | *"╯") ;;
			*)
				echo "FAIL $what: row $n does not end with a panel border: |$line|" >&2
				fail=1
				;;
			esac
		done < <(printf '%s\n' "$screen" | head -n $((h - 2)))
	fi
}

for size in ${SIZES:-80x24 120x36 160x48}; do
	w=${size%x*}
	h=${size#*x}
	sock=vkchat-smoke-$$-$size
	t new-session -d -s smoke -x "$w" -y "$h" "$bin chat --model demo"
	wait_ready "$size start"
	check "$size start" "$w" "$h"
	for s in "${samples[@]}"; do
		t send-keys -t smoke -l "$s"
		t send-keys -t smoke Enter
		sleep 0.3
		wait_ready "$size after '$s'" || fail=1
		check "$size after '$s'" "$w" "$h"
	done
	t send-keys -t smoke Tab Left Left
	sleep 0.3
	check "$size inspecting" "$w" "$h"
	t send-keys -t smoke Tab F1
	sleep 0.3
	check "$size help" "$w" "$h"
	echo "tmux-smoke: $size done"
	t kill-server 2>/dev/null || true
done
if [[ $fail -ne 0 ]]; then
	echo "tmux-smoke: FAILED" >&2
	exit 1
fi
echo "tmux-smoke: ok"
