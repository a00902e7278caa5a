#!/usr/bin/env bash
# test.sh is the project's one test command (the README's, and .ci/run's):
# it installs what the tests need, then checks formatting, vets every
# module, runs staticcheck on every module (pinned; go run fetches and
# builds it through the module proxy, nothing to install first), runs every
# test with the race detector and shuffled order, and gives each fuzz
# target a short bounded run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/need-redis.sh

unformatted=$(gofmt -l . | grep -v '^bench/results/' || true)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
if [ -f bench/go.mod ]; then (cd bench && go vet ./...); fi
staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2
go run "$staticcheck" ./...
if [ -f bench/go.mod ]; then (cd bench && go run "$staticcheck" ./...); fi
log=$(mktemp)
go test -race -shuffle=on -count=1 -timeout 15m ./... 2>&1 | tee "$log"
scripts/fuzz.sh "${FUZZTIME:-10s}"
if [ -f envoy/go.mod ]; then (cd envoy && go vet ./...); fi
if [ -f envoy/go.mod ]; then (cd envoy && go run "$staticcheck" ./...); fi
if [ -f envoy/bench/go.mod ]; then (cd envoy/bench && go vet ./... && go run "$staticcheck" ./...); fi
if [ -f envoy/go.mod ]; then (cd envoy && go test -race -shuffle=on -count=1 -timeout 15m ./... 2>&1) | tee -a "$log"; fi
passed=$(grep -c '^ok ' "$log" || true)
failed=$(grep -c '^FAIL' "$log" || true)
rm -f "$log"
echo "packages: $passed passed, $failed failed"
