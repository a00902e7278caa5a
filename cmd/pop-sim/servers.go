package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// servers are the Redis and NATS a run uses, and what must be stopped after.
type servers struct {
	redisAddr string
	natsURL   string
	proc      *redisproc.Proc
	nats      *natsembed.Server
}

// checkServers fails fast when -redis-addr or -nats-url cannot be reached.
func (o *options) checkServers(ctx context.Context) error {
	if o.redisAddr != "" {
		c := goredis.NewClient(&goredis.Options{Addr: o.redisAddr, MaxRetries: -1,
			DialTimeout: 2 * time.Second})
		defer c.Close()
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if err := c.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("redis-addr %s unreachable: %v", o.redisAddr, err)
		}
	}
	if o.natsURL != "" && o.needsNATS() {
		nc, err := nats.Connect(o.natsURL, nats.Timeout(2*time.Second))
		if err != nil {
			return fmt.Errorf("nats-url %s unreachable: %v", o.natsURL, err)
		}
		nc.Close()
	}
	return nil
}

// needsNATS reports whether any mode run gossips.
func (o *options) needsNATS() bool {
	if o.cfg.Scenario == "article" {
		return false
	}
	return o.sweep != "" || slices.ContainsFunc(o.modes(), func(m string) bool {
		return m == "hybrid"
	})
}

// startServers starts what the flags did not name: a private redis-server
// and, when a mode gossips, an embedded NATS server.
func (o *options) startServers() (*servers, error) {
	s := &servers{redisAddr: o.redisAddr, natsURL: o.natsURL}
	if s.redisAddr == "" {
		p, err := redisproc.Start()
		if err != nil {
			return nil, err
		}
		s.proc, s.redisAddr = p, p.Addr
	}
	if s.natsURL == "" && o.needsNATS() {
		n, err := natsembed.Start()
		if err != nil {
			s.stop()
			return nil, err
		}
		s.nats, s.natsURL = n, n.URL()
	}
	return s, nil
}

func (s *servers) stop() {
	if s.nats != nil {
		s.nats.Stop()
	}
	if s.proc != nil {
		s.proc.Stop()
	}
}

// namespace is a fresh key and subject prefix for one run of one mode, so
// runs sharing a Redis or NATS never see each other's state.
func namespace(mode string) string {
	return fmt.Sprintf("popsim-%x-%s", time.Now().UnixNano(), strings.ReplaceAll(mode, "-", ""))
}
