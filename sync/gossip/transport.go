package gossip

import (
	"github.com/edgelimit/edgelimit/core"
	"github.com/nats-io/nats.go"
)

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
// reconnect buffer is full, and an error matching ErrSubject, with nothing
// sent, when the namespace makes no literal subject (see Subject).
func (t *Transport) Publish(payload []byte) error {
	if err := checkSubject(t.subject); err != nil {
		return err
	}
	if err := t.nc.Publish(t.subject, payload); err != nil {
		return &core.UnavailableError{Op: "nats publish", Err: err}
	}
	return nil
}

// Subscribe calls fn with every payload received on the subject, from
// nats.go's delivery goroutine, until the returned subscription is
// unsubscribed. fn must not keep the slice. Errors: one matching
// ErrSubject, with nothing subscribed, when the namespace makes no literal
// subject (see Subject: a token "*" would hear other namespaces' gossip);
// a failed subscription wraps core.ErrUnavailable.
func (t *Transport) Subscribe(fn func(payload []byte)) (*nats.Subscription, error) {
	if err := checkSubject(t.subject); err != nil {
		return nil, err
	}
	sub, err := t.nc.Subscribe(t.subject, func(m *nats.Msg) { fn(m.Data) })
	if err != nil {
		return nil, &core.UnavailableError{Op: "nats subscribe", Err: err}
	}
	sub.SetPendingLimits(1<<16, 256<<20)
	return sub, nil
}
