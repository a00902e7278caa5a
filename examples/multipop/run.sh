#!/usr/bin/env bash
# run.sh runs edgelimit's multi-process example: it builds the multipop
# command, starts a private redis-server and an embedded NATS on free
# loopback ports, three PoP processes (HTTP server → middleware → budget
# limiter, gossiping over the NATS; GOSSIP=0 for none),
# sends the load (one attacker spread over the three PoPs, calm clients far
# below the limit), prints the attacker's admitted count per window against
# the limit, and stops everything, also on Ctrl-C or failure.
#
#   examples/multipop/run.sh
#   LIMIT=100 WINDOW=10s DURATION=41s ATTACK_RATE=300 examples/multipop/run.sh
#
# Needs Go and redis-server (scripts/need-redis.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/../.."
LIMIT=${LIMIT:-50} WINDOW=${WINDOW:-5s} DURATION=${DURATION:-21s} ATTACK_RATE=${ATTACK_RATE:-150} GOSSIP=${GOSSIP:-1}
command -v redis-server >/dev/null || { echo "run.sh: redis-server not found (scripts/need-redis.sh installs it)" >&2; exit 1; }

work=$(mktemp -d)
pops=() nats_pid='' redis_pid=''
# stop sends SIGTERM to the given processes and waits for them.
stop() {
  local pid
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}
# cleanup stops the PoPs first (each flushes its last hits to Redis and
# NATS on SIGTERM), then NATS, then Redis.
cleanup() {
  stop "${pops[@]}"
  stop $nats_pid
  stop $redis_pid
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$work/multipop" ./examples/multipop
mapfile -t ports < <("$work/multipop" ports 5)
redis_port=${ports[0]} nats_port=${ports[1]}

redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null && break; sleep 0.05; done
"$work/multipop" nats -port "$nats_port" &
nats_pid=$!
nats_url=''
[ "$GOSSIP" = 0 ] || nats_url="nats://127.0.0.1:$nats_port"
targets=()
for i in 1 2 3; do
  port=${ports[$((i + 1))]}
  "$work/multipop" pop -name "pop$i" -port "$port" -redis "127.0.0.1:$redis_port" \
    -nats "$nats_url" -limit "$LIMIT" -window "$WINDOW" &
  pops+=($!)
  targets+=("http://127.0.0.1:$port/")
done

"$work/multipop" load -targets "$(IFS=,; echo "${targets[*]}")" -limit "$LIMIT" -window "$WINDOW" \
  -duration "$DURATION" -attack-rate "$ATTACK_RATE"
