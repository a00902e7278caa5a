package netmodel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestValidateRefusesChancesThatAreNotNumbers: gossip loss and duplication
// chances of NaN are refused like any value outside [0, 1]. It catches a
// check written as r < 0 || r > 1, false for NaN, which let -gossip-loss
// NaN through as no loss at all (Links.Chance never fires for it).
func TestValidateRefusesChancesThatAreNotNumbers(t *testing.T) {
	for _, f := range []Faults{{GossipLoss: math.NaN()}, {GossipDup: math.NaN()}} {
		assert.Error(t, f.Validate(8), "Validate(%+v) accepted", f)
	}
	assert.NoError(t, Faults{GossipLoss: 0, GossipDup: 1}.Validate(8), "0 and 1 are chances")
}
