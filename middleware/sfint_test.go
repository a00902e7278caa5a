package middleware_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHeaderIntegersFitRFC8941: RateLimit-Policy's q and RateLimit's r are
// written with strconv.FormatInt, but an RFC 8941 Integer has at most 15
// digits; a Limit.Max of 2^50 (sync/budget's MaxLimit, 16 digits) makes
// both fields unparseable for a structured-field parser.
func TestHeaderIntegersFitRFC8941(t *testing.T) {
	l, err := local.New(core.PerWindow(1<<50, time.Hour))
	require.NoError(t, err)
	h := newHandler(t, middleware.WithLimit("bytes", l), middleware.WithClock(core.NewManualClock(epoch)))
	w := get(h, "192.0.2.1:1000")
	for _, name := range []string{"RateLimit-Policy", "RateLimit"} {
		v := w.Header().Get(name)
		assert.NotRegexp(t, regexp.MustCompile(`[0-9]{16}`), v, "%s: %q has an integer of more than 15 digits", name, v)
	}
}
