package service

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSFString(t *testing.T) {
	assert.Equal(t, `"per-ip"`, sfString("per-ip"))
	assert.Equal(t, `"a\"b\\c"`, sfString(`a"b\c`), "quote and backslash are escaped")
	assert.Equal(t, `"x?y?"`, sfString("x\ny\xff"), "bytes outside printable ASCII become ?")
}

func TestPolicyField(t *testing.T) {
	hs := []headed{
		{name: "a", max: 10, window: time.Minute},
		{name: "b", max: 5, window: 1500 * time.Millisecond},
	}
	assert.Equal(t, `"a";q=10;w=60, "b";q=5`, policyField(hs), "w is left out for a window of no whole seconds")
}

func TestRateLimitFieldPicksMostRestrictive(t *testing.T) {
	allowed := []headed{
		{name: "a", remaining: 5, reset: 10 * time.Second},
		{name: "b", remaining: 2, reset: 3 * time.Second},
		{name: "c", remaining: 2, reset: 7 * time.Second},
	}
	f, retry := rateLimitField(allowed)
	assert.Equal(t, `"c";r=2;t=7`, f, "fewest remaining, ties broken by the longest reset")
	assert.Zero(t, retry, "no Retry-After when allowed")

	denied := []headed{
		{name: "a", remaining: 0, reset: 2 * time.Second, denied: true},
		{name: "b", remaining: 9, reset: time.Second},
		{name: "c", remaining: 0, reset: 2500 * time.Millisecond, denied: true},
	}
	f, retry = rateLimitField(denied)
	assert.Equal(t, `"c";r=0;t=3`, f, "the denying descriptor with the longest wait, rounded up")
	assert.Equal(t, int64(3), retry)

	f, retry = rateLimitField([]headed{{name: "z", denied: true}})
	assert.Equal(t, `"z";r=0;t=1`, f, "a denial never says retry at once")
	assert.Equal(t, int64(1), retry)
}

// TestRateLimitFieldNamesNoBlindDecision: a fail-mode decision (blind: the
// store was down, nothing counted) is never the one RateLimit names, so it
// cannot hide a counted descriptor's quota; with only blind ones there is
// no field, while a blind denial still sets Retry-After. It catches a
// fail-open "r=0" winning the fewest-remaining pick and a fail-closed
// denial reported as quota spent.
func TestRateLimitFieldNamesNoBlindDecision(t *testing.T) {
	f, retry := rateLimitField([]headed{
		{name: "open", remaining: 0, reset: 50 * time.Second, blind: true},
		{name: "counted", remaining: 4, reset: 50 * time.Second},
	})
	assert.Equal(t, `"counted";r=4;t=50`, f, "the counted descriptor is named, not the fail-open one")
	assert.Zero(t, retry)

	f, retry = rateLimitField([]headed{{name: "open", remaining: 0, reset: 50 * time.Second, blind: true}})
	assert.Empty(t, f, "a fail-open decision alone: no field")
	assert.Zero(t, retry)

	f, retry = rateLimitField([]headed{
		{name: "closed", reset: 1500 * time.Millisecond, denied: true, blind: true},
		{name: "counted", remaining: 4, reset: 50 * time.Second},
	})
	assert.Empty(t, f, "a fail-closed denial alone among the denials: no field")
	assert.Equal(t, int64(2), retry, "its wait, rounded up, is the Retry-After")

	f, retry = rateLimitField([]headed{
		{name: "closed", reset: 5 * time.Second, denied: true, blind: true},
		{name: "over", reset: 2 * time.Second, denied: true},
	})
	assert.Equal(t, `"over";r=0;t=2`, f, "the counted denial is named")
	assert.Equal(t, int64(5), retry, "Retry-After waits for every denial")
}
