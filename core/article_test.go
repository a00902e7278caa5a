package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// boundaryBurst replays the article's table A with core's math alone: limit
// 100 per 60 s, 100 requests in the last 100 ms of window 0, then 100
// requests one second into window 1, one ms apart. It returns how many were
// admitted.
func boundaryBurst(a Algorithm) int {
	l := Limit{Max: 100, Window: time.Minute, Algorithm: a}
	var s anyState
	admitted := 0
	for i := int64(0); i < 100; i++ {
		if s.decide(l, t0+59_900+i, 1, true).Allowed {
			admitted++
		}
	}
	for i := int64(0); i < 100; i++ {
		if s.decide(l, t0+61_000+i, 1, true).Allowed {
			admitted++
		}
	}
	return admitted
}

// TestArticleTableA: fixed window 200, sliding counter 100..105 (the
// article measured 102), exact log 100; the bucket refills only 1.67 units
// a second so it admits Max plus what refilled.
func TestArticleTableA(t *testing.T) {
	fixed, sliding, log := boundaryBurst(FixedWindow), boundaryBurst(SlidingWindow), boundaryBurst(SlidingLog)
	assert.Equal(t, 200, fixed, "fixed window admitted %d, want 200", fixed)
	if assert.GreaterOrEqual(t, sliding, 100, "sliding counter admitted %d, want 100..105", sliding) {
		assert.LessOrEqual(t, sliding, 105, "sliding counter admitted %d, want 100..105", sliding)
	}
	if sliding != 102 {
		t.Logf("sliding counter admitted %d (article: 102)", sliding)
	}
	assert.Equal(t, 100, log, "exact log admitted %d, want 100", log)
	b := boundaryBurst(TokenBucket)
	if assert.GreaterOrEqual(t, b, 100, "bucket admitted %d, want 100 + about 1.2 s of refill", b) {
		assert.LessOrEqual(t, b, 103, "bucket admitted %d, want 100 + about 1.2 s of refill", b)
	}
}
