package local

import (
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/conformance"
)

// TestConformance runs the suite every backend passes.
func TestConformance(t *testing.T) {
	var last *Limiter
	conformance.Run(t, conformance.Backend{
		Name: "local",
		New: func(t *testing.T, l core.Limit) (core.Limiter, error) {
			lim, err := New(l)
			if err != nil {
				return nil, err
			}
			last = lim
			return lim, nil
		},
		Stored: func(t *testing.T) int { return last.Len() },
	})
}
