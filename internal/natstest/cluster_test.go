package natstest

import (
	"testing"

	"github.com/nats-io/nats.go"
)

// TestClusterRoutesAndFailover: a message published on one node reaches a
// subscriber on another; with the publisher's node shut down its client
// moves to another node and delivery goes on; the node rejoins on restart.
func TestClusterRoutesAndFailover(t *testing.T) {
	c := StartCluster(t, 3)
	pub := c.Connect(t, 0)
	sub := c.Connect(t, 2)
	got := make(chan string, 16)
	if _, err := sub.Subscribe("t.x", func(m *nats.Msg) { got <- string(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	publishUntil(t, pub, got, "one")
	c.Servers[0].Shutdown()
	publishUntil(t, pub, got, "two")
	if u := pub.ConnectedUrl(); u == c.Servers[0].URL {
		t.Fatalf("still connected to the stopped node %s", u)
	}
	c.Restart(t, 0)
	only0, err := nats.Connect(c.Servers[0].URL, ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer only0.Close()
	publishUntil(t, only0, got, "three")
}
