#!/usr/bin/env bash
# budget-candidates.sh DIR runs scripts/budget-lines.sh once per candidate
# policy of the budget limiter, each into DIR/NAME, and sets them against
# every target (budget-lines targets), by how much each misses
# (docs/budget.md, "Candidates against every target"). The candidates:
#   default         budget.Config's zero value (accuracy first)
#   nowait          Config.NoWait (latency first)
#   no-free-credit  FreeCredit -1: every unit a PoP admits unasked is granted
#   sync-300ms      SyncInterval 300 ms: a third of the Syncs
# The table goes to stdout and DIR/targets.txt, Markdown to DIR/targets.md,
# JSON to DIR/targets.json.
# About 13–25 min on 2 shared cores.
#
#   scripts/budget-candidates.sh /tmp/candidates
set -euo pipefail
if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
mkdir -p "$1"
dir=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."

# name|budget-lines.sh MODE [FLAG...]
candidates=(
	"default|budget"
	"nowait|budget-nowait"
	"no-free-credit|budget -free-credit -1"
	"sync-300ms|budget -sync-interval 300ms"
)
args=()
for c in "${candidates[@]}"; do
	name=${c%%|*}
	read -r -a how <<<"${c#*|}"
	echo "== candidate $name: ${how[*]}" >&2
	scripts/budget-lines.sh "$dir/$name" "${how[@]}" >/dev/null
	args+=("$name=$dir/$name")
done
go run ./cmd/budget-lines targets -json "${args[@]}" >"$dir/targets.json"
go run ./cmd/budget-lines targets -md "${args[@]}" >"$dir/targets.md"
go run ./cmd/budget-lines targets "${args[@]}" | tee "$dir/targets.txt"
