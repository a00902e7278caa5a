.PHONY: bench

# bench runs every benchmark of bench/ (its own module) and writes
# docs/benchmarks.md; about ten minutes on a 2-core machine.
bench:
	cd bench && go run ./cmd/benchreport -out ../docs/benchmarks.md
