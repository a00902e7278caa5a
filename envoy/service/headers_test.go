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
