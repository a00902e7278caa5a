#!/usr/bin/env bash
# need-redis.sh installs redis-server from Debian/Ubuntu packages when it is
# not on PATH. The tests and pop-sim start their own private server from it.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
echo "redis-server not found: installing it with apt-get" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
# The package may start a system service on 6379; we never use it.
command -v redis-server >/dev/null
