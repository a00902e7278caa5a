package gossip

import (
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/nats-io/nats.go"
)

// receiveAll waits up to 10 s for want payloads on ch.
func receiveAll(t *testing.T, ch <-chan string, want int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for got := 0; got < want; got++ {
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("received %d of %d payloads within 10s", got, want)
		}
	}
}

// connectSubscribed returns a Connect'ed connection with a Transport
// subscribed on it, whose payloads arrive on the channel.
func connectSubscribed(t *testing.T, url string) (*nats.Conn, *Transport, <-chan string) {
	t.Helper()
	nc, err := Connect(url, nats.Name("connect-test"))
	if err != nil {
		t.Fatalf("Connect(%s): %v", url, err)
	}
	t.Cleanup(nc.Close)
	tr := NewTransport(nc, "ct")
	ch := make(chan string, 64)
	if _, err := tr.Subscribe(func(p []byte) { ch <- string(p) }); err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	return nc, tr, ch
}

// TestConnectBeforeNATSIsUp: a PoP that starts while NATS is down gets a
// connection (nats.Connect with its defaults fails), publishes into the
// buffer without error, and once the server is up its subscription and
// its buffered payloads go through.
func TestConnectBeforeNATSIsUp(t *testing.T) {
	s := natstest.Start(t)
	s.Shutdown()
	if nc, err := nats.Connect(s.URL); err == nil {
		nc.Close()
		t.Fatal("nats.Connect with defaults succeeded with the server down; the test shows nothing")
	}
	nc, tr, ch := connectSubscribed(t, s.URL)
	if nc.IsConnected() {
		t.Fatal("connected to a server that is down")
	}
	for i := 0; i < 5; i++ {
		if err := tr.Publish([]byte("while down")); err != nil {
			t.Fatalf("Publish while NATS is down: %v", err)
		}
	}
	s.Restart()
	receiveAll(t, ch, 5)
}

// TestConnectRidesOutRestarts: through several server restarts the
// connection comes back by itself (within a second: 250 ms between tries)
// and what was published while it was away is delivered.
func TestConnectRidesOutRestarts(t *testing.T) {
	s := natstest.Start(t)
	nc, tr, ch := connectSubscribed(t, s.URL)
	for round := 0; round < 3; round++ {
		s.Shutdown()
		waitStatus(t, nc, false)
		for i := 0; i < 3; i++ {
			if err := tr.Publish([]byte("buffered")); err != nil {
				t.Fatalf("round %d: Publish while down: %v", round, err)
			}
		}
		s.Restart()
		start := time.Now()
		waitStatus(t, nc, true)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("round %d: reconnected after %s; want within about 350 ms", round, d)
		}
		receiveAll(t, ch, 3)
	}
}

// TestConnectBufferBounded: while disconnected, a publish past the 8 MiB
// buffer fails at once with core.ErrUnavailable instead of blocking.
func TestConnectBufferBounded(t *testing.T) {
	s := natstest.Start(t)
	nc, tr, _ := connectSubscribed(t, s.URL)
	s.Shutdown()
	waitStatus(t, nc, false)
	payload := make([]byte, 1<<20)
	start := time.Now()
	var err error
	for i := 0; i < 20 && err == nil; i++ {
		err = tr.Publish(payload)
	}
	if !errors.Is(err, core.ErrUnavailable) || !errors.Is(err, nats.ErrReconnectBufExceeded) {
		t.Fatalf("20 MiB published while down: err %v; want core.ErrUnavailable wrapping nats.ErrReconnectBufExceeded", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("publishing into a full buffer took %s", d)
	}
}

// TestConnectOptionsValues: the options set what the doc says, and extra
// options passed to Connect override them.
func TestConnectOptionsValues(t *testing.T) {
	o := nats.GetDefaultOptions()
	for _, opt := range append(ConnectOptions(), nats.ReconnectWait(time.Second)) {
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
	}
	if o.MaxReconnect != -1 || !o.RetryOnFailedConnect || o.ReconnectBufSize != 8<<20 ||
		o.ReconnectJitter != 100*time.Millisecond || o.PingInterval != 5*time.Second || o.MaxPingsOut != 2 {
		t.Errorf("options: max reconnects %d, retry on failed connect %v, buffer %d, jitter %s, ping %s × %d",
			o.MaxReconnect, o.RetryOnFailedConnect, o.ReconnectBufSize, o.ReconnectJitter, o.PingInterval, o.MaxPingsOut)
	}
	if o.ReconnectWait != time.Second {
		t.Errorf("a later option did not override: ReconnectWait %s", o.ReconnectWait)
	}
}

// waitStatus waits up to 10 s for nc to be connected (up) or not.
func waitStatus(t *testing.T, nc *nats.Conn, up bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for nc.IsConnected() != up {
		if time.Now().After(deadline) {
			t.Fatalf("connection status %v after 10s; want connected=%v", nc.Status(), up)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
