package freeport

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGetIsBindable(t *testing.T) {
	p, err := Get()
	require.NoError(t, err, "Get() = %d, %v", p, err)
	require.Greater(t, p, 0, "Get() = %d, %v", p, err)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	require.NoError(t, err, "port %d from Get is not bindable", p)
	l.Close()
}
