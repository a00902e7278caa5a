#!/usr/bin/env bash
# budget-lines.sh DIR [MODE [FLAG...]] measures the budget limiter against
# pure Redis on every line of its targets (docs/budget.md, "line by
# line"): pop-sim -mode redis,MODE FLAG... (MODE budget, the default, or
# budget-nowait; FLAGs such as -free-credit -1 or -sync-interval 300ms
# make a candidate: scripts/budget-candidates.sh) at the default size on
#   - the six scenarios;
#   - flash-crowd with its crowd (0.5-1.5x the limit) arriving over
#     -crowd-span 100ms, 1s and 10s;
#   - a crowd of 10x the limit from every PoP (each crowd identity sends
#     10x the limit in all, an equal share from each PoP) within 100ms, 1s
#     and 10s: a trace budget-lines crowd writes, replayed with -trace;
#   - mixed and spread-attack on 32 PoPs;
#   - the faults, one at a time on mixed: a Redis outage, a partitioned
#     PoP, a crashed PoP, Redis losing its state, clock skew, and gossip
#     losing and duplicating
#     5% of its messages each (this line runs budget-gossip, the budget
#     limiter with gossip over NATS, in budget's column);
#   - a small limit against the PoPs on short windows: 20 per 1 s over 8
#     PoPs at 40,000 requests a second per PoP (the budget limiter runs
#     it without free credit: budget.AutoFreeCredit);
#   - mixed at 1,000,000 identities and 2,000,000 requests (Redis bytes
#     per identity at scale);
#   - a larger limit: mixed and near-limit at 1,000 per 10 s, ten times the
#     default's requests (2,000,000), so each identity sends the same
#     multiple of its limit as at 100: there a one-way delay of 75 ms moves
#     the sliding estimate by up to 7.5 units, at 100 by under one.
#
# DIR receives each line's report (LINE.json, pop-sim -json), its stderr
# (LINE.err), the crowd traces, and the table as text (table.txt) and JSON
# (lines.json). Progress goes to stderr, the table to stdout. About 3–6 min
# on 2 shared cores.
#
#   scripts/budget-lines.sh /tmp/budget-lines
#   scripts/budget-lines.sh /tmp/nowait budget-nowait
set -euo pipefail
if [ $# -lt 1 ]; then
	echo "usage: $0 DIR [MODE [FLAG...]]   (DIR receives each run's pop-sim -json report; MODE budget or budget-nowait)" >&2
	exit 2
fi
mkdir -p "$1"
dir=$(cd "$1" && pwd)
mode=${2:-budget}
extra=("${@:3}")
case "$mode" in
budget | budget-nowait) ;;
*)
	echo "$0: MODE $mode: want budget or budget-nowait" >&2
	exit 2
	;;
esac
cd "$(dirname "$0")/.."
scripts/need-redis.sh
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
echo "building pop-sim and budget-lines" >&2
go build -o "$bin/pop-sim" ./cmd/pop-sim
go build -o "$bin/budget-lines" ./cmd/budget-lines

for span in 100ms 1s 10s; do
	"$bin/budget-lines" crowd -span "$span" >"$dir/crowd10x-$span.csv"
done

# name|pop-sim flags (besides -mode redis,MODE -json FLAG...)
lines=(
	"mixed|-scenario mixed"
	"spread-attack|-scenario spread-attack"
	"pinned|-scenario pinned"
	"flash-crowd|-scenario flash-crowd"
	"near-limit|-scenario near-limit"
	"edge|-scenario edge"
	"flash-crowd-100ms|-scenario flash-crowd -crowd-span 100ms"
	"flash-crowd-1s|-scenario flash-crowd -crowd-span 1s"
	"flash-crowd-10s|-scenario flash-crowd -crowd-span 10s"
	"crowd10x-100ms|-trace $dir/crowd10x-100ms.csv"
	"crowd10x-1s|-trace $dir/crowd10x-1s.csv"
	"crowd10x-10s|-trace $dir/crowd10x-10s.csv"
	"mixed-32pops|-scenario mixed -pops 32"
	"spread-attack-32pops|-scenario spread-attack -pops 32"
	"outage-20s+5s|-scenario mixed -redis-outage 20s+5s"
	"partition-5@35s+3s|-scenario mixed -partition 5@35s+3s"
	"crash-3@45s|-scenario mixed -crash 3@45s"
	"redis-loss@30s|-scenario mixed -redis-loss 30s"
	"clock-skew-2s|-scenario mixed -clock-skew 2s"
	"gossip-loss-dup-5%|-scenario mixed -mode redis,$mode-gossip -gossip-loss 0.05 -gossip-dup 0.05"
	"small-limit-1s|-scenario mixed -window 1s -limit 20 -requests 640000 -identities 100000 -rate 40000"
	"mixed-1m-identities|-scenario mixed -identities 1000000 -requests 2000000"
	"mixed-limit-1000|-scenario mixed -limit 1000 -requests 2000000"
	"near-limit-limit-1000|-scenario near-limit -limit 1000 -requests 2000000"
)
names=()
start=$SECONDS
k=0
for l in "${lines[@]}"; do
	k=$((k + 1))
	name=${l%%|*}
	read -r -a flags <<<"${l#*|}"
	names+=("$name")
	t=$SECONDS
	printf '[%2d/%d] %-22s %s ... ' "$k" "${#lines[@]}" "$name" "${l#*|}" >&2
	if ! "$bin/pop-sim" -mode "redis,$mode" -json "${flags[@]}" ${extra[@]+"${extra[@]}"} >"$dir/$name.json" 2>"$dir/$name.err"; then
		echo "failed; its stderr ($dir/$name.err) ends:" >&2
		tail -5 "$dir/$name.err" >&2
		exit 1
	fi
	echo "$((SECONDS - t)) s" >&2
done
echo "all ${#lines[@]} runs in $((SECONDS - start)) s" >&2

"$bin/budget-lines" table -json "$dir" "${names[@]}" >"$dir/lines.json"
{
	"$bin/budget-lines" table "$dir" "${names[@]}"
	echo "r/b: pure Redis / budget on the same trace; over max: the exact log's worst window / limit, delta budget - redis;"
	echo "served %: units admitted / the reference's, per class the reference contested; units b/r: budget's admitted / Redis';"
	echo "script us/dec: Redis' script time (INFO commandstats) / decisions, each mode on its own redis-server; items/dec: budget's Machines;"
	echo "redis B/id: used_memory grown / identities with state; view B/entry, B/id: budget's Machines' heap / their entries (one PoP's cost of an identity), / identities of the run (all PoPs' views together)"
	echo "lost: units admitted that Redis never counted; budget's is not measured (-): a calm identity's free-credit spends are reported only with its next item, by design, so they sit inside Redis' reservation, not in its count"
	echo "gossip-loss-dup-5%: budget's column is $mode-gossip (gossip over NATS); pure Redis sends no gossip"
	echo "budget's column: -mode $mode ${extra[*]}"
} | tee "$dir/table.txt"
