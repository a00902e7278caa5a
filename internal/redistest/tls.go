package redistest

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/internal/tlstest"
	"github.com/stretchr/testify/require"
)

// StartTLS launches a private redis-server that speaks only TLS, with m's
// server certificate and requiring client certificates signed by m's CA
// (see redisproc.StartTLS), and stops it in t.Cleanup. Its Client uses
// m.Client. extra are appended to the server's arguments. It calls t.Fatal
// with a clear message when redis-server is missing or does not answer
// over TLS.
func StartTLS(t testing.TB, m *tlstest.Material, extra ...string) *redisproc.Proc {
	t.Helper()
	p, err := redisproc.StartTLS(redisproc.TLS{CertFile: m.ServerCert, KeyFile: m.ServerKey,
		CAFile: m.CA, Client: m.Client}, extra...)
	require.NoError(t, err, "this test needs a real Redis with TLS")
	t.Cleanup(func() { p.Stop() })
	c := p.Client()
	defer c.Close()
	err = c.Ping(context.Background()).Err()
	require.NoError(t, err, "private TLS redis-server on %s does not answer", p.Addr)
	return p
}
