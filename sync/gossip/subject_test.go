package gossip

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransportRefusesNonLiteralSubjects: on a real NATS, a namespace
// whose subject is no literal NATS subject (a wildcard token, an empty
// token, whitespace, a NUL byte) is refused by Subscribe and Publish with
// ErrSubject, matching core.ErrInvalid, with nothing subscribed or sent.
// The harm it stops: subscribed, namespace "*.eu" heard the gossip of
// every namespace "<x>.eu" (the test publishes on "fr.eu" and reports what
// "*.eu" got), counts of another key space, whose denials pure Redis of
// its own would not make. Mutations it catches: the check left out of
// Subscribe or Publish, a rule of it dropped.
func TestTransportRefusesNonLiteralSubjects(t *testing.T) {
	s := natstest.Start(t)
	nc := s.Connect(t)
	for _, ns := range []string{"*.eu", "eu.*.x", ">.eu", "a b", "a\tb", "a\nb", ".eu", "eu.", "a..b", "a\x00b"} {
		before := nc.NumSubscriptions()
		got := make(chan string, 1)
		sub, err := NewTransport(nc, ns).Subscribe(func(p []byte) {
			select {
			case got <- string(p):
			default:
			}
		})
		if err == nil && ns == "*.eu" {
			require.NoError(t, NewTransport(nc, "fr.eu").Publish([]byte("fr.eu's counts")))
			select {
			case p := <-got:
				assert.Fail(t, fmt.Sprintf("namespace %q subscribed on %q and heard namespace fr.eu's payload %q", ns, Subject(ns), p))
			case <-time.After(hang):
			}
		}
		if err == nil {
			_ = sub.Unsubscribe()
		}
		assert.ErrorIs(t, err, ErrSubject, "Subscribe for namespace %q", ns)
		assert.ErrorIs(t, err, core.ErrInvalid, "Subscribe for namespace %q", ns)
		assert.Equal(t, before, nc.NumSubscriptions(), "namespace %q: a subscription was left", ns)
		err = NewTransport(nc, ns).Publish([]byte("p"))
		assert.ErrorIs(t, err, ErrSubject, "Publish for namespace %q", ns)
	}
	for _, ns := range []string{"el", "fr.eu", "el:10/1s.budget", "a-b_c.d*e.>x"} {
		sub, err := NewTransport(nc, ns).Subscribe(func([]byte) {})
		require.NoError(t, err, "Subscribe for literal namespace %q", ns)
		require.NoError(t, sub.Unsubscribe())
		require.NoError(t, NewTransport(nc, ns).Publish([]byte("p")), "Publish for literal namespace %q", ns)
	}
}
