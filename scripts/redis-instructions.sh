#!/usr/bin/env bash
# redis-instructions.sh [POP-SIM FLAG...] measures what each mode costs
# Redis in CPU instructions, which the machine's load does not move:
# pop-sim runs one mode at a time (pure Redis, then the budget limiter)
# against one redis-server running under valgrind's callgrind, whose
# instruction counter is zeroed before each mode and read after it. It
# prints, per mode, the server's instructions per decision of the trace
# and the ratio against pure Redis'.
#
# Script time (INFO commandstats, pop-sim's "script µs/dec") is wall time
# and moves by a fifth to a third from run to run on shared cores; this
# count is the same to a few parts in a thousand on the same trace (and
# depends on its size: pop-sim's own commands and the start weigh more
# per decision on a short trace, so compare runs of the same flags). It is the
# server's whole work while the mode ran: the scripts, the commands they
# call, reading calls and writing replies (pop-sim pipelines the calls of
# different identities, as a deployment's clients do not always), and
# pop-sim's own few commands (INFO, the keys it deletes before reading
# memory). Decisions are the same as without valgrind (the simulator's
# clock is virtual); only the wall time grows, about 60x: mixed at the
# default size takes 4–7 min (alone, or beside another such run), the
# 32-PoP lines longer.
#
#   scripts/redis-instructions.sh -scenario mixed
#   scripts/redis-instructions.sh -scenario spread-attack -pops 32
#
# Needs valgrind (apt-get install -y valgrind), redis-server and
# redis-cli. Set MODES to compare other modes (default "redis budget"; the
# first is the baseline).
set -euo pipefail
for bin in valgrind callgrind_control redis-server redis-cli jq; do
	if ! command -v "$bin" >/dev/null; then
		echo "$0: $bin not found (apt-get install -y valgrind redis-server jq)" >&2
		exit 1
	fi
done
cd "$(dirname "$0")/.."
read -r -a modes <<<"${MODES:-redis budget}"
work=$(mktemp -d)
server=
cleanup() {
	if [ -n "$server" ]; then
		redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "building pop-sim" >&2
go build -o "$work/pop-sim" ./cmd/pop-sim

# a free port: one nothing answers on
port=
for _ in $(seq 20); do
	p=$((20000 + RANDOM % 20000))
	if ! redis-cli -p "$p" ping >/dev/null 2>&1; then
		port=$p
		break
	fi
done
if [ -z "$port" ]; then
	echo "$0: no free port found" >&2
	exit 1
fi
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" \
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
	--dir "$work" --protected-mode no --loglevel warning >"$work/valgrind.log" 2>&1 &
server=$!
for _ in $(seq 120); do
	if redis-cli -p "$port" ping >/dev/null 2>&1; then
		break
	fi
	sleep 0.5
done
# ours: the server on the port is the process valgrind runs (the same
# pid), not another job's that took the port meanwhile (it would be
# flushed and shut down)
if [ "$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | awk -F: '$1 == "process_id" {print $2}')" != "$server" ]; then
	echo "$0: the redis-server on port $port is not the one started under valgrind (pid $server):" >&2
	cat "$work/valgrind.log" >&2
	server= # not ours to shut down; valgrind's own exits with its failed bind
	exit 1
fi

# callgrind_control names its target by pid; a dump is written next to
# callgrind.out as callgrind.out.N, N counting the dumps from 1
k=0
for m in "${modes[@]}"; do
	k=$((k + 1))
	echo "mode $m: pop-sim $* (under callgrind: minutes)" >&2
	redis-cli -p "$port" flushall >/dev/null
	callgrind_control -z "$server" >"$work/control.log" 2>&1 || {
		echo "$0: callgrind_control -z failed:" >&2
		cat "$work/control.log" >&2
		exit 1
	}
	"$work/pop-sim" -redis-addr "127.0.0.1:$port" -parallel 1 -mode "$m" -json "$@" >"$work/$m.json" 2>"$work/$m.err" || {
		echo "$0: pop-sim -mode $m failed:" >&2
		cat "$work/$m.err" >&2
		exit 1
	}
	callgrind_control --dump="$m" "$server" >"$work/control.log" 2>&1 || {
		echo "$0: callgrind_control --dump failed:" >&2
		cat "$work/control.log" >&2
		exit 1
	}
	for _ in $(seq 100); do
		[ -s "$work/callgrind.out.$k" ] && grep -q '^summary:' "$work/callgrind.out.$k" && break
		sleep 0.2
	done
	grep -q '^summary:' "$work/callgrind.out.$k" 2>/dev/null || {
		echo "$0: callgrind wrote no dump $work/callgrind.out.$k for mode $m" >&2
		exit 1
	}
done

printf '%-16s %12s %16s %12s %8s\n' mode decisions instructions "instr/dec" ratio
base=
k=0
for m in "${modes[@]}"; do
	k=$((k + 1))
	instr=$(awk '/^summary:/ {print $2}' "$work/callgrind.out.$k")
	dec=$(jq '[.results[] | select(.mode != "reference")][0].decisions' "$work/$m.json")
	per=$((instr / dec))
	if [ -z "$base" ]; then
		base=$per
	fi
	printf '%-16s %12d %16d %12d %8s\n' "$m" "$dec" "$instr" "$per" "$(awk -v a="$per" -v b="$base" 'BEGIN {printf "%.3f", a / b}')"
done
