package hybrid

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

func TestNewValidates(t *testing.T) {
	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	ok := Config{PoP: "p", Limit: core.PerWindow(10, time.Second), Redis: rdb}
	cases := []struct {
		name string
		mod  func(*Config)
		want error
	}{
		{"no pop", func(c *Config) { c.PoP = "" }, ErrBadConfig},
		{"long pop", func(c *Config) { c.PoP = strings.Repeat("p", 65) }, ErrBadConfig},
		{"no redis", func(c *Config) { c.Redis = nil }, ErrBadConfig},
		{"margin", func(c *Config) { c.Margin = 1 }, ErrBadConfig},
		{"negative margin", func(c *Config) { c.Margin = -0.1 }, ErrBadConfig},
		{"escrow without margin", func(c *Config) { c.Escrow = true }, ErrBadConfig},
		{"owners without margin", func(c *Config) { c.Owners = true }, ErrBadConfig},
		{"owners with escrow", func(c *Config) { c.Owners, c.Escrow, c.Margin = true, true, 0.1 }, ErrBadConfig},
		{"brace namespace", func(c *Config) { c.Namespace = "a{b" }, ErrBadConfig},
		{"wildcard namespace", func(c *Config) { c.Namespace = "a.>" }, ErrBadConfig},
		{"bucket", func(c *Config) { c.Limit.Algorithm = core.TokenBucket }, core.ErrBadAlgorithm},
		{"zero limit", func(c *Config) { c.Limit.Max = 0 }, core.ErrBadLimit},
	}
	for _, c := range cases {
		cfg := ok
		c.mod(&cfg)
		_, err := New(cfg)
		if !errors.Is(err, c.want) || !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
	n, err := New(ok)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(n.ID(), "p#") || n.Limit() != ok.Limit {
		t.Fatalf("ID %q Limit %v", n.ID(), n.Limit())
	}
	var _ core.Limiter = n
}
