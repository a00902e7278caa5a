package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sim/netmodel"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunRefusesFaultsOfPoPsTheTraceLacks: Run refuses, with an error and
// before any work, faults naming a PoP the trace does not have (its 4
// PoPs are 0 to 3), in every mode. It catches Run taking Env.Faults as
// checked: the budget mode's crash of PoP 9 indexed its 4 Machines
// (panic: index out of range), and a partition of PoP 4 cut nothing while
// the fault table named it.
func TestRunRefusesFaultsOfPoPsTheTraceLacks(t *testing.T) {
	for _, f := range []netmodel.Faults{
		{Crashes: []netmodel.Crash{{PoP: 9, At: time.Second}}},
		{Partition: netmodel.PoPSpan{PoP: 4, Span: netmodel.Span{Start: time.Second, Dur: time.Second}}},
	} {
		for _, mode := range []string{"budget", "redis"} {
			e := faultEnv(t, f)
			var err error
			require.NotPanics(t, func() { _, err = Run(context.Background(), e, mode) }, "%s with %+v", mode, f)
			if assert.Error(t, err, "%s with %+v on 4 PoPs", mode, f) {
				assert.Contains(t, err.Error(), "of 4", "%s with %+v", mode, f)
			}
		}
	}
}
