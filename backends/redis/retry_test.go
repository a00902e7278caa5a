package redis

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dropProxy is a TCP proxy to the Redis at addr; armed, it lets the next
// EVALSHA through, discards Redis' reply and closes that connection, as a
// network cut between Redis running the script and the reply arriving.
type dropProxy struct {
	ln    net.Listener
	addr  string
	armed atomic.Bool
}

func (p *dropProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *dropProxy) handle(c net.Conn) {
	s, err := net.Dial("tcp", p.addr)
	if err != nil {
		c.Close()
		return
	}
	var drop atomic.Bool
	go func() { // server -> client
		buf := make([]byte, 64<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 {
				if drop.Load() {
					c.Close()
					s.Close()
					return
				}
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				c.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if bytes.Contains(bytes.ToLower(buf[:n]), []byte("evalsha")) && p.armed.CompareAndSwap(true, false) {
				drop.Store(true)
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			s.Close() // ends the other direction too
			return
		}
	}
}

// TestLostReplyRetriedCountsTwice pins what the package doc says of a
// reply lost after Redis ran the script (the connection closed in
// between): go-redis, with its default MaxRetries, sends the call again
// and the script counts the request a second time, within the limit (the
// identity's quota pays); with MaxRetries -1 the call is sent once and
// gets the fail-mode decision with an error matching core.ErrUnavailable.
// It fails if either side changes without the doc.
func TestLostReplyRetriedCountsTwice(t *testing.T) {
	c, proc := redistest.Client(t)
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	p := &dropProxy{ln: ln, addr: proc.Addr}
	go p.serve()
	for _, tc := range []struct {
		retries int
		counted string
	}{{0, "2"}, {-1, "1"}} {
		cl := goredis.NewClient(&goredis.Options{Addr: ln.Addr().String(), MaxRetries: tc.retries})
		lim := core.PerWindow(5, time.Minute)
		// the timeout only bounds the call: the retry's backoff and dial
		// must fit in it however loaded the machine
		l := newLimiter(t, cl, lim, WithPrefix(fmt.Sprintf("retry%d", tc.retries)), WithTimeout(schedulerSlack))
		// loaded first, so the call whose reply is lost is the EVALSHA that ran
		require.NoError(t, l.script.Load(ctx, cl).Err())
		p.armed.Store(true)
		now := time.Now()
		d, err := l.AllowN(ctx, "k", now, 1)
		state := strings.Split(c.Get(ctx, l.Key("k")).Val(), ":")
		require.Len(t, state, 3, "MaxRetries %d: the key's state", tc.retries)
		assert.Equal(t, tc.counted, state[1], "MaxRetries %d: units counted for one request", tc.retries)
		if tc.retries == 0 {
			require.NoError(t, err)
			assert.True(t, d.Allowed, "retried: admitted")
			assert.Equal(t, lim.Max-2, d.Remaining, "retried: the second count shows")
		} else {
			assert.ErrorIs(t, err, core.ErrUnavailable, "sent once: the lost reply is an outage")
			assert.Equal(t, core.SourceFailClosed, d.Source, "sent once: the fail-mode decision")
		}
		require.NoError(t, cl.Close())
	}
}
