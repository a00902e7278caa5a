#!/usr/bin/env bash
# pop-sim.sh is the main job: it installs redis-server when missing, then
# runs the multi-PoP simulator, which starts its own private Redis and an
# embedded NATS server. Flags are passed through (default: all modes on the
# default scenario).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/need-redis.sh
exec go run ./cmd/pop-sim "$@"
