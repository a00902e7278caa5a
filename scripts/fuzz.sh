#!/usr/bin/env bash
# fuzz.sh runs every Fuzz* target of the module for a bounded time each
# (default 10s), one at a time: go test -fuzz takes one target per run.
set -euo pipefail
cd "$(dirname "$0")/.."
t="${1:-10s}"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $f for $t"
    go test -run '^$' -fuzz "^${f}\$" -fuzztime "$t" "$pkg" >/tmp/edgelimit-fuzz.log 2>&1 || { cat /tmp/edgelimit-fuzz.log; exit 1; }
  done
done
