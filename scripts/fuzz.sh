#!/bin/sh
# Runs every Fuzz target in the module for a short bounded time each, so CI
# exercises the parsers beyond their committed seed corpora.
set -eu
t="${1:-15s}"
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for name in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
		echo "fuzz $pkg $name ($t)"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$t" "$pkg"
	done
done
