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
# One shuffle seed for the whole run, printed first and in the summary, so
# a failure's order can be replayed: SHUFFLE=<seed> scripts/test.sh (or
# go test -shuffle=<seed> on the package). go test also prints
# "-test.shuffle <seed>" at the top of each package's output.
seed="${SHUFFLE:-$(date +%s%N)}"
echo "go test -race -shuffle=$seed"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
rc=0
go test -race -shuffle="$seed" -count=1 -timeout 15m ./... 2>&1 | tee "$log" || rc=$?
# The Envoy rate limit service is a Go module of its own (envoy/, and its
# peer benchmark in envoy/bench/): vetted, staticchecked and tested here too.
if [ -f envoy/go.mod ]; then
  (cd envoy && go vet ./... && go run "$staticcheck" ./...) || rc=$?
  (cd envoy && go test -race -shuffle="$seed" -count=1 -timeout 15m ./... 2>&1) | tee -a "$log" || rc=$?
fi
if [ -f envoy/bench/go.mod ]; then (cd envoy/bench && go vet ./... && go run "$staticcheck" ./...) || rc=$?; fi
passed=$(grep -c '^ok ' "$log" || true)
failed=$(grep -c '^FAIL[[:space:]]' "$log" || true)
if [ "$rc" != 0 ]; then
  # Each failing test with what it waited for or expected: testify's
  # Error and Messages lines, or the test's own log line.
  echo "failing tests (shuffle seed $seed):"
  grep -E '^\s*--- FAIL|^\s+Error:|^\s+Messages:|^panic:|timed out' "$log" | sed 's/^/  /' | head -200
  echo "packages: $passed passed, $failed failed; shuffle seed $seed; $(( $(date +%s) - start )) s"
  exit 1
fi
scripts/fuzz.sh "${FUZZTIME:-10s}"
echo "packages: $passed passed, $failed failed; shuffle seed $seed; $(( $(date +%s) - start )) s"
