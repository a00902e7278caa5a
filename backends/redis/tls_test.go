package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/logtest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/internal/tlstest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tlsNow is the request time of the TLS tests, in ms since the epoch.
const tlsNow = 1_800_000_000_500

// TestRedisOverTLS: TLS is the go-redis client's own option (TLSConfig),
// so over a TLS-only Redis that requires client certificates the limiter
// decides exactly as core's model for every algorithm (limit 5: five
// allowed, the sixth denied). A plain TCP client, a client of another CA,
// a client trusting the CA without a certificate and one trusting the CA
// but presenting another CA's client certificate (which only the server
// can refuse) each get the fail-closed denial with ErrUnavailable and
// write nothing.
func TestRedisOverTLS(t *testing.T) {
	m := tlstest.New(t)
	p := redistest.StartTLS(t, m)
	c := goredis.NewClient(&goredis.Options{Addr: p.Addr, TLSConfig: m.Client})
	defer c.Close()
	ctx := context.Background()
	for _, lim := range everyLimit(core.PerWindow(5, time.Minute)) {
		l := newLimiter(t, c, lim, WithPrefix(lim.Algorithm.String()))
		ref := &model{limit: lim}
		allowed := 0
		for i := 0; i < 6; i++ {
			d, err := l.AllowN(ctx, "user:1", at(tlsNow), 1)
			want := ref.decide(tlsNow, 1, true)
			require.NoError(t, err, "%s request %d over TLS: %+v %v, want %+v from Redis", lim, i, d, err, want)
			require.True(t, sameDecision(d, want), "%s request %d over TLS: %+v %v, want %+v from Redis", lim, i, d, err, want)
			require.Equal(t, core.SourceRedis, d.Source, "%s request %d over TLS: %+v %v, want %+v from Redis", lim, i, d, err, want)
			if d.Allowed {
				allowed++
			}
		}
		require.Equal(t, 5, allowed, "%s over TLS: %d of 6 allowed, want 5", lim, allowed)
	}

	keys := dbsize(t, c)
	other := tlstest.New(t)
	refused := map[string]*tls.Config{
		"plain TCP":             nil,
		"another CA":            other.Client,
		"no client certificate": {RootCAs: m.Pool},
		// trusts the server, so only the server can refuse it
		"client certificate of another CA": {RootCAs: m.Pool, Certificates: other.Client.Certificates},
	}
	for name, cfg := range refused {
		bad := goredis.NewClient(&goredis.Options{Addr: p.Addr, TLSConfig: cfg, MaxRetries: -1,
			DialTimeout: time.Second})
		defer bad.Close()
		l := newLimiter(t, bad, core.PerWindow(5, time.Minute), WithTimeout(time.Second), WithPrefix("refused"))
		d, err := l.AllowN(ctx, "user:2", at(tlsNow), 1)
		require.ErrorIs(t, err, core.ErrUnavailable, "%s client: %+v %v, want a fail-closed denial with ErrUnavailable", name, d, err)
		require.False(t, d.Allowed, "%s client: %+v %v, want a fail-closed denial with ErrUnavailable", name, d, err)
		require.Equal(t, core.SourceFailClosed, d.Source, "%s client: %+v %v, want a fail-closed denial with ErrUnavailable", name, d, err)
		require.False(t, cfg != nil && cfg.RootCAs == m.Pool &&
			(errors.As(err, new(x509.UnknownAuthorityError)) || strings.Contains(err.Error(), "x509:")), "%s client: %v; it refused the server, want the server to refuse it", name, err)
		t.Logf("%s client refused: %v", name, err)
	}
	n := dbsize(t, c)
	require.Equal(t, keys, n, "DBSIZE %d after the refused clients, was %d", n, keys)
}

// TestRedisACLOverTLS: ACL user/password and TLS combine in go-redis'
// options: the limiter decides as an ACL user over TLS, and a wrong
// password gets the fail-closed denial with ErrUnavailable. Neither
// password appears in the error nor in anything logged meanwhile (the
// standard logger, go-redis' logger).
func TestRedisACLOverTLS(t *testing.T) {
	const password, wrong = "s3cret-pa55", "guess-pa55"
	logs := logtest.Start(t)
	m := tlstest.New(t)
	p := redistest.StartTLS(t, m)
	admin := p.Client()
	defer admin.Close()
	ctx := context.Background()
	for _, args := range [][]any{
		{"ACL", "SETUSER", "edge", "on", ">" + password, "~el:*", "+@all"},
		{"ACL", "SETUSER", "default", "off"},
	} {
		err := admin.Do(ctx, args...).Err()
		require.NoError(t, err, "%v", args[:3])
	}
	lim := core.PerWindow(3, time.Minute)
	authed := goredis.NewClient(&goredis.Options{Addr: p.Addr, TLSConfig: m.Client,
		Username: "edge", Password: password})
	defer authed.Close()
	l := newLimiter(t, authed, lim)
	for i := 0; i < 4; i++ {
		d, err := l.AllowN(ctx, "user:1", at(tlsNow), 1)
		require.NoError(t, err, "request %d as ACL user over TLS: %+v %v, want allowed=%v", i, d, err, i < 3)
		require.Equal(t, i < 3, d.Allowed, "request %d as ACL user over TLS: %+v %v, want allowed=%v", i, d, err, i < 3)
	}

	guess := goredis.NewClient(&goredis.Options{Addr: p.Addr, TLSConfig: m.Client,
		Username: "edge", Password: wrong, MaxRetries: -1})
	defer guess.Close()
	lg := newLimiter(t, guess, lim, WithTimeout(time.Second))
	d, err := lg.AllowN(ctx, "user:2", at(tlsNow), 1)
	require.ErrorIs(t, err, core.ErrUnavailable, "wrong password: %+v %v, want a fail-closed denial with ErrUnavailable", d, err)
	require.False(t, d.Allowed, "wrong password: %+v %v, want a fail-closed denial with ErrUnavailable", d, err)
	require.Equal(t, core.SourceFailClosed, d.Source, "wrong password: %+v %v, want a fail-closed denial with ErrUnavailable", d, err)
	for _, secret := range []string{password, wrong} {
		assert.NotContains(t, err.Error(), secret, "error %q contains a password", err)
		assert.NotContains(t, logs.String(), secret, "a password was logged:\n%s", logs)
	}
	t.Logf("wrong password: %v; %d bytes logged", err, len(logs.String()))
}
