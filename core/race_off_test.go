//go:build !race

package core

// propertyRuns is how many random states each property test draws per
// algorithm.
const propertyRuns = 20_000
