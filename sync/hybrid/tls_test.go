package hybrid

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/logtest"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/internal/tlstest"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// newTLSEnv is newEnv (without NATS) over a private Redis that speaks only
// TLS and requires client certificates of m's CA; e.rdb carries m.Client.
func newTLSEnv(t *testing.T, m *tlstest.Material) *env {
	t.Helper()
	e := &env{t: t, proc: redistest.StartTLS(t, m), cmds: &counter{}, clock: core.NewManualClock(t0)}
	e.rdb = goredis.NewClient(&goredis.Options{Addr: e.proc.Addr, TLSConfig: m.Client,
		MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, PoolSize: 8})
	e.rdb.AddHook(e.cmds)
	t.Cleanup(func() { e.rdb.Close() })
	return e
}

// TestHybridOverTLS: TLS is each client's own option, so two PoPs work
// unchanged over a TLS-only Redis and a TLS-only NATS, both requiring
// client certificates: gossip arrives over NATS, Sync writes Redis, and
// near the limit the Redis-decided requests admit exactly up to the limit
// over both PoPs. A NATS client without TLS is refused, and a PoP whose
// Redis client has no TLS gets, fail-closed, a denial with ErrUnavailable.
func TestHybridOverTLS(t *testing.T) {
	m := tlstest.New(t)
	e := newTLSEnv(t, m)
	srv := natstest.StartWithTLS(t, m.Server)
	if nc, err := nats.Connect(srv.URL, nats.Timeout(2*time.Second)); err == nil {
		nc.Close()
		t.Fatal("a client without TLS options connected to a TLS-only NATS")
	}
	mod := func(c *Config) {
		c.NATS = srv.Connect(t, nats.Secure(m.Client))
		c.Limit = core.PerWindow(10, 10*time.Second)
		c.Margin = 0.5 // local up to 5, at Redis beyond
	}
	a, b := e.node("pop-a", mod), e.node("pop-b", mod)
	for i := 0; i < 5; i++ {
		if d := mustAllow(t, a, "user:7", t0); !d.Allowed || d.Source != core.SourceLocal {
			t.Fatalf("request %d at a: %+v, want a local admission", i, d)
		}
	}
	if err := a.Gossip(t0); err != nil {
		t.Fatalf("Gossip over TLS: %v", err)
	}
	waitFor(t, "b to hear a's 5 hits over TLS", func() bool {
		cur, _ := b.Counts("user:7", t0)
		return cur == 5
	})
	mustSync(t, a, t0)
	if got := e.redisTotal("el", "user:7", e.idx(a)); got != 5 {
		t.Fatalf("Redis holds %d after a's Sync over TLS, want 5", got)
	}
	allowed := 0
	for i := 0; i < 8; i++ {
		d := mustAllow(t, b, "user:7", t0)
		if i == 0 && d.Source != core.SourceRedis {
			t.Fatalf("b's first request near the limit: %+v, want decided at Redis", d)
		}
		if d.Allowed {
			allowed++
		}
	}
	if allowed != 5 {
		t.Fatalf("b admitted %d near the limit, want 5 (10 over both PoPs)", allowed)
	}
	if st := b.Stats(); st.RedisErrors != 0 {
		t.Fatalf("b saw %d Redis errors over TLS", st.RedisErrors)
	}

	plain := goredis.NewClient(&goredis.Options{Addr: e.proc.Addr, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second})
	t.Cleanup(func() { plain.Close() })
	c := e.node("pop-c", func(c *Config) {
		c.Redis, c.FailClosed = plain, true
		c.Limit, c.Margin = core.PerWindow(10, 10*time.Second), 0.95 // every request at Redis
	})
	d, err := c.AllowN(context.Background(), "user:8", t0, 1)
	if !errors.Is(err, core.ErrUnavailable) || d.Allowed || d.Source != core.SourceFailClosed {
		t.Fatalf("PoP with a plain Redis client: %+v %v, want a fail-closed denial with ErrUnavailable", d, err)
	}
	if got := e.redisTotal("el", "user:8", e.idx(c)); got != 0 {
		t.Fatalf("the refused PoP wrote %d to Redis", got)
	}
}

// TestGossipOverNATSCredentialsNotLogged: NATS user/password and token are
// the connection's own options, so gossip works unchanged on a server that
// refuses anonymous clients and wrong credentials; the refusals do not echo
// the secret tried, and nothing logged during the test (the standard
// logger, go-redis' logger; the library itself has no logger) contains
// either secret.
func TestGossipOverNATSCredentialsNotLogged(t *testing.T) {
	const secret, wrong = "s3cret-nats-pa55", "guess-nats-pa55"
	for _, c := range []struct {
		name         string
		start        func(t *testing.T) *natstest.Server
		right, guess nats.Option
	}{
		{"user/password",
			func(t *testing.T) *natstest.Server { return natstest.StartWithUser(t, "edge", secret) },
			nats.UserInfo("edge", secret), nats.UserInfo("edge", wrong)},
		{"token",
			func(t *testing.T) *natstest.Server { return natstest.StartWithToken(t, secret) },
			nats.Token(secret), nats.Token(wrong)},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := logtest.Start(t)
			e := newEnv(t, false)
			srv := c.start(t)
			for what, opts := range map[string][]nats.Option{"anonymous": nil, "wrong secret": {c.guess}} {
				nc, err := nats.Connect(srv.URL, append(opts, nats.Timeout(2*time.Second))...)
				if err == nil {
					nc.Close()
					t.Fatalf("%s client connected", what)
				}
				if strings.Contains(err.Error(), "pa55") {
					t.Fatalf("%s client: error %q shows a secret", what, err)
				}
			}
			a := e.node("pop-a", func(cfg *Config) { cfg.NATS = srv.Connect(t, c.right) })
			b := e.node("pop-b", func(cfg *Config) { cfg.NATS = srv.Connect(t, c.right) })
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
			if strings.Contains(logs.String(), "pa55") {
				t.Fatalf("a secret was logged:\n%s", logs)
			}
		})
	}
}
