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
			if err != nil || !sameDecision(d, want) || d.Source != core.SourceRedis {
				t.Fatalf("%s request %d over TLS: %+v %v, want %+v from Redis", lim, i, d, err, want)
			}
			if d.Allowed {
				allowed++
			}
		}
		if allowed != 5 {
			t.Fatalf("%s over TLS: %d of 6 allowed, want 5", lim, allowed)
		}
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
		if !errors.Is(err, core.ErrUnavailable) || d.Allowed || d.Source != core.SourceFailClosed {
			t.Fatalf("%s client: %+v %v, want a fail-closed denial with ErrUnavailable", name, d, err)
		}
		if cfg != nil && cfg.RootCAs == m.Pool &&
			(errors.As(err, new(x509.UnknownAuthorityError)) || strings.Contains(err.Error(), "x509:")) {
			t.Fatalf("%s client: %v; it refused the server, want the server to refuse it", name, err)
		}
		t.Logf("%s client refused: %v", name, err)
	}
	if n := dbsize(t, c); n != keys {
		t.Fatalf("DBSIZE %d after the refused clients, was %d", n, keys)
	}
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
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args[:3], err)
		}
	}
	lim := core.PerWindow(3, time.Minute)
	authed := goredis.NewClient(&goredis.Options{Addr: p.Addr, TLSConfig: m.Client,
		Username: "edge", Password: password})
	defer authed.Close()
	l := newLimiter(t, authed, lim)
	for i := 0; i < 4; i++ {
		d, err := l.AllowN(ctx, "user:1", at(tlsNow), 1)
		if err != nil || d.Allowed != (i < 3) {
			t.Fatalf("request %d as ACL user over TLS: %+v %v, want allowed=%v", i, d, err, i < 3)
		}
	}

	guess := goredis.NewClient(&goredis.Options{Addr: p.Addr, TLSConfig: m.Client,
		Username: "edge", Password: wrong, MaxRetries: -1})
	defer guess.Close()
	lg := newLimiter(t, guess, lim, WithTimeout(time.Second))
	d, err := lg.AllowN(ctx, "user:2", at(tlsNow), 1)
	if !errors.Is(err, core.ErrUnavailable) || d.Allowed || d.Source != core.SourceFailClosed {
		t.Fatalf("wrong password: %+v %v, want a fail-closed denial with ErrUnavailable", d, err)
	}
	for _, secret := range []string{password, wrong} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q contains a password", err)
		}
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a password was logged:\n%s", logs)
		}
	}
	t.Logf("wrong password: %v; %d bytes logged", err, len(logs.String()))
}
