//go:build race

package core

// propertyRuns is smaller under the race detector, which slows this pure,
// single-goroutine math twenty-fold and finds nothing in it.
const propertyRuns = 1_000
