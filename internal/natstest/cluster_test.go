package natstest

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// TestClusterRoutesAndFailover: a message published on one node reaches a
// subscriber on another; with the publisher's node shut down its client
// moves to another node and delivery goes on; the node rejoins on restart.
func TestClusterRoutesAndFailover(t *testing.T) {
	c := StartCluster(t, 3)
	pub := c.Connect(t, 0)
	sub := c.Connect(t, 2)
	got := make(chan string, 16)
	_, err := sub.Subscribe("t.x", func(m *nats.Msg) { got <- string(m.Data) })
	require.NoError(t, err, "subscribe")
	require.NoError(t, sub.Flush(), "flush the subscription")
	publishUntil(t, pub, got, "one")
	c.Servers[0].Shutdown()
	publishUntil(t, pub, got, "two")
	u := pub.ConnectedUrl()
	require.NotEqual(t, c.Servers[0].URL, u, "still connected to the stopped node %s", u)
	c.Restart(t, 0)
	only0, err := nats.Connect(c.Servers[0].URL, ClientOptions()...)
	require.NoError(t, err)
	defer only0.Close()
	publishUntil(t, only0, got, "three")
}
