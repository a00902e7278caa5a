package middleware_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/stretchr/testify/require"
)

// onBudget returns a newLimiterFunc building the budget limiter (one PoP
// of a deployment of one, so its decisions are pure Redis' to the unit) on
// one private redis-server; each limiter gets its own namespace. The
// middleware hands it the time (AllowN's now) from its own clock.
func onBudget(t *testing.T) newLimiterFunc {
	rdb, _ := redistest.Client(t)
	var n atomic.Int32
	return func(t *testing.T, max int64, window time.Duration) *recorder {
		t.Helper()
		l, err := budget.New(budget.Config{PoP: "mw", Limit: core.PerWindow(max, window), PoPs: 1,
			Namespace: fmt.Sprintf("mwb%d", n.Add(1))}, rdb, core.NewManualClock(epoch))
		require.NoError(t, err, "budget.New")
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		return &recorder{Limiter: l}
	}
}

func TestBudgetDeniedAfterLimitWithExactHeaders(t *testing.T) {
	checkDeniedAfterLimit(t, onBudget(t))
}

func TestBudgetDeniedRequestSpendsNothingOnOtherLimits(t *testing.T) {
	checkDeniedSpendsNothing(t, onBudget(t))
}

func TestBudgetMostRestrictiveLimitIsReported(t *testing.T) {
	checkMostRestrictive(t, onBudget(t))
}

func TestBudgetSpoofedForwardedFor(t *testing.T) {
	checkSpoofedForwardedFor(t, onBudget(t))
}
