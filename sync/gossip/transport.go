package gossip

import (
	"github.com/edgelimit/edgelimit/core"
	"github.com/nats-io/nats.go"
)

// SubjectSuffix is appended to the namespace to form the gossip subject.
const SubjectSuffix = ".edgelimit.gossip.v1"

// Subject is the NATS subject of a namespace's gossip: namespace +
// SubjectSuffix. Identities never appear in it.
func Subject(namespace string) string { return namespace + SubjectSuffix }

// Transport publishes and receives gossip payloads on one NATS connection.
// The zero value is unusable; build one with NewTransport.
type Transport struct {
	nc      *nats.Conn
	subject string
}

// NewTransport returns a Transport on nc for namespace. nc's reconnect
// options decide what happens while the server is away: with nats.go's
// defaults, publishes are buffered (up to ReconnectBufSize) and the
// connection reconnects by itself.
func NewTransport(nc *nats.Conn, namespace string) *Transport {
	return &Transport{nc: nc, subject: Subject(namespace)}
}

// Publish sends one payload. It never blocks on a disconnected server; it
// returns a *core.UnavailableError when the connection is closed or its
// reconnect buffer is full.
func (t *Transport) Publish(payload []byte) error {
	if err := t.nc.Publish(t.subject, payload); err != nil {
		return &core.UnavailableError{Op: "nats publish", Err: err}
	}
	return nil
}

// Subscribe calls fn with every payload received on the subject, from
// nats.go's delivery goroutine, until the returned subscription is
// unsubscribed. fn must not keep the slice.
func (t *Transport) Subscribe(fn func(payload []byte)) (*nats.Subscription, error) {
	sub, err := t.nc.Subscribe(t.subject, func(m *nats.Msg) { fn(m.Data) })
	if err != nil {
		return nil, &core.UnavailableError{Op: "nats subscribe", Err: err}
	}
	sub.SetPendingLimits(1<<16, 256<<20)
	return sub, nil
}
