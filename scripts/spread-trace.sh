#!/usr/bin/env bash
# spread-trace.sh IDENTITIES POPS writes to stdout a pop-sim trace
# (docs/trace-format.md) in which every identity sends one request of
# weight 1 to every PoP, all within the first 9 s of one 10 s window: the
# traffic that makes every PoP's view hold every identity (the memory per
# identity with 8 and 32 PoPs seeing each identity; docs/tradeoffs.md §2).
#
#   scripts/spread-trace.sh 1000000 8 > /tmp/spread8.csv
#   go run ./cmd/pop-sim -trace /tmp/spread8.csv -mode budget
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: $0 IDENTITIES POPS > trace.csv" >&2
	exit 2
fi
awk -v n="$1" -v p="$2" -v d=9000 'BEGIN {
	N = n * p
	print "# edgelimit-trace v1"
	print "# pops: " p
	print "# duration_ms: 10000"
	print "# identities: " n
	print "# requests: " N
	print "t_ms,identity,pop,weight"
	for (k = 0; k < N; k++) printf "%.6f,id%d,%d,1\n", k * d / N, int(k / p), k % p
}'
