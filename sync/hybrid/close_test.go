package hybrid

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPeekAfterClose: Peek after Close returns core.ErrClosed, as every
// decision does; a bad key still reports core.ErrInvalid.
func TestPeekAfterClose(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil)
	mustAllow(t, n, "k", t0)
	require.NoError(t, n.Close(context.Background()), "Close")
	_, err := n.Peek(context.Background(), "k", t0)
	assert.ErrorIs(t, err, core.ErrClosed, "Peek of a known key after Close")
	_, err = n.Peek(context.Background(), "never-seen", t0)
	assert.ErrorIs(t, err, core.ErrClosed, "Peek of an unknown key after Close")
	_, err = n.Peek(context.Background(), "", t0)
	assert.ErrorIs(t, err, core.ErrInvalid, "Peek of an empty key after Close")
	_, err = n.AllowN(context.Background(), "k", t0, 1)
	assert.ErrorIs(t, err, core.ErrClosed, "AllowN after Close")
}
