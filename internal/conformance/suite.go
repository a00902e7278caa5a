// Package conformance is the one test suite every limiter must pass: each
// backend and algorithm runs the same cases (the article's boundary burst,
// weighted requests, expiry, peek and reset, honest RetryAfter, distinct
// identities, atomicity under concurrency, and bad input that writes
// nothing). A new backend is one line in the table of conformance_test.go.
package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

// Backend describes one limiter implementation to the suite.
type Backend struct {
	// Name labels the subtests.
	Name string
	// New builds a limiter for limit on fresh, empty state; it returns the
	// constructor's error for an invalid limit.
	New func(t *testing.T, limit core.Limit) (core.Limiter, error)
	// Algorithms lists the algorithms the backend supports; nil means all.
	Algorithms []core.Algorithm
	// Stored reports how many entries the backend holds (Redis DBSIZE, LRU
	// length), to prove that bad input writes nothing.
	Stored func(t *testing.T) int
}

// Run runs every case for every algorithm of b.
func Run(t *testing.T, b Backend) {
	algos := b.Algorithms
	if algos == nil {
		algos = core.Algorithms
	}
	for _, a := range algos {
		t.Run(b.Name+"/"+a.String(), func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, b, a) })
			}
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, b Backend, a core.Algorithm)
}

var cases = []testCase{
	{"BoundaryBurst", testBoundaryBurst},
	{"Weighted", testWeighted},
	{"Expiry", testExpiry},
	{"PeekDoesNotSpend", testPeek},
	{"PeekNDecidesAsAllowN", testPeekN},
	{"Reset", testReset},
	{"RetryAfterIsHonest", testRetryAfter},
	{"DistinctIdentities", testDistinct},
	{"Atomicity", testAtomicity},
	{"BadInputWritesNothing", testBadInput},
	{"InvalidLimit", testInvalidLimit},
}

// epoch is a window-aligned instant for every window used here (a multiple
// of 24 h), so "end of window 0" means what it says.
var epoch = Epoch

// Epoch is the window-aligned instant the cases' times count from (a
// multiple of 24 h): a backend whose Reset acts on the windows around its
// clock sets that clock here.
var Epoch = time.Unix(1_700_006_400, 0)

var ctx = context.Background()

func build(t *testing.T, b Backend, a core.Algorithm, max int64, w time.Duration) core.Limiter {
	t.Helper()
	l, err := b.New(t, core.Limit{Max: max, Window: w, Algorithm: a})
	require.NoError(t, err, "%s: New(%d/%s %s)", b.Name, max, w, a)
	return l
}

func allow(t *testing.T, l core.Limiter, key string, now time.Time, n int64) core.Decision {
	t.Helper()
	d, err := l.AllowN(ctx, key, now, n)
	require.NoError(t, err, "AllowN(%q, %s, %d)", key, now.Sub(epoch), n)
	return d
}

func peek(t *testing.T, l core.Limiter, key string, now time.Time) core.Decision {
	t.Helper()
	d, err := l.Peek(ctx, key, now)
	require.NoError(t, err, "Peek(%q)", key)
	return d
}
