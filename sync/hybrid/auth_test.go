package hybrid

import (
	"testing"

	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/nats-io/nats.go"
)

// TestGossipOverAuthenticatedNATS: NATS authentication is the connection's
// own option (here a token), so gossip works unchanged on a server that
// refuses anonymous clients — and that server really does refuse them.
func TestGossipOverAuthenticatedNATS(t *testing.T) {
	e := newEnv(t, false)
	srv := natstest.StartWithToken(t, "s3cret-token")
	if nc, err := nats.Connect(srv.URL); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected to a token-protected server")
	}
	a := e.node("pop-a", func(c *Config) { c.NATS = srv.Connect(t, nats.Token("s3cret-token")) })
	b := e.node("pop-b", func(c *Config) { c.NATS = srv.Connect(t, nats.Token("s3cret-token")) })
	for i := 0; i < 5; i++ {
		mustAllow(t, a, "user:7", t0)
	}
	if err := a.Gossip(t0); err != nil {
		t.Fatalf("Gossip: %v", err)
	}
	waitFor(t, "b to hear a's 5 hits", func() bool {
		cur, _ := b.Counts("user:7", t0)
		return cur == 5
	})
}
