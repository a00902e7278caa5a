#!/usr/bin/env bash
# vulncheck.sh runs govulncheck on the main module and on bench/ against an
# offline copy of the Go vulnerability database: the module
# golang.org/x/vulndb (its data/osv reports, fetched through the module
# proxy) indexed by its own cmd/indexdb, so it needs no access to the
# database's web address. VULNDB=version picks another snapshot of it.
# Exits non-zero when govulncheck finds a vulnerability that the code calls.
set -euo pipefail
cd "$(dirname "$0")/.."
vulndb=golang.org/x/vulndb@${VULNDB:-v0.0.0-20261105234957-e22db6528018}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$(go mod download -json "$vulndb" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
go run "${vulndb/@/\/cmd\/indexdb@}" -vulns "$src/data/osv" -out "$work/db"
status=0
go run golang.org/x/vuln/cmd/govulncheck@v1.9.0 -db "file://$work/db" ./... || status=$?
if [ -f bench/go.mod ]; then
  (cd bench && go run golang.org/x/vuln/cmd/govulncheck@v1.9.0 -db "file://$work/db" ./...) || status=$?
fi
exit "$status"
