package natstest

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/tlstest"
	"github.com/nats-io/nats.go"
)

// TestStartWithUser: a client with the user and password gets messages
// through; anonymous clients and a wrong password are refused, and the
// refusal does not echo the password tried.
func TestStartWithUser(t *testing.T) {
	s := StartWithUser(t, "edge", "pa55-word")
	nc := s.Connect(t, nats.UserInfo("edge", "pa55-word"))
	roundTrip(t, nc)
	for name, opts := range map[string][]nats.Option{
		"anonymous":      nil,
		"wrong password": {nats.UserInfo("edge", "guess-word")},
	} {
		nc, err := nats.Connect(s.URL, append(opts, nats.Timeout(2*time.Second))...)
		if err == nil {
			nc.Close()
			t.Fatalf("%s: connected", name)
		}
		if strings.Contains(err.Error(), "word") {
			t.Fatalf("%s: error %q shows the password", name, err)
		}
	}
}

// TestStartWithTLS: a client with the CA and a client certificate gets
// messages through a TLS-only server; a raw plaintext client gets no PONG;
// a default nats.go client (which the server's INFO upgrades to TLS with
// the system roots), a client of another CA and a client trusting the CA
// without a certificate are refused.
func TestStartWithTLS(t *testing.T) {
	m, other := tlstest.New(t), tlstest.New(t)
	s := StartWithTLS(t, m.Server)
	roundTrip(t, s.Connect(t, nats.Secure(m.Client)))
	plaintextRefused(t, s.URL)
	for name, opts := range map[string][]nats.Option{
		"plain":          nil,
		"another CA":     {nats.Secure(other.Client)},
		"no client cert": {nats.RootCAs(m.CA)},
	} {
		nc, err := nats.Connect(s.URL, append(opts, nats.Timeout(2*time.Second))...)
		if err == nil {
			nc.Close()
			t.Fatalf("%s client connected to a TLS-only server requiring client certificates", name)
		}
		t.Logf("%s: %v", name, err)
	}
}

// roundTrip fails the test unless a message published on nc comes back to
// its own subscription.
func roundTrip(t *testing.T, nc *nats.Conn) {
	t.Helper()
	got := make(chan string, 16)
	if _, err := nc.Subscribe("t.x", func(m *nats.Msg) { got <- string(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	publishUntil(t, nc, got, "hello")
}

// plaintextRefused speaks the NATS protocol in clear text to url: the
// server's INFO must say tls_required and a PING must get no PONG.
func plaintextRefused(t *testing.T, url string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "nats://"), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	r := bufio.NewReader(c)
	info, err := r.ReadString('\n')
	if err != nil || !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("INFO %q (%v), want tls_required", info, err)
	}
	if _, err := c.Write([]byte("CONNECT {\"verbose\":false}\r\nPING\r\n")); err != nil {
		return // refused already
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return // connection closed or nothing came back
		}
		if strings.HasPrefix(line, "PONG") {
			t.Fatal("a plaintext client got PONG from a TLS-only server")
		}
	}
}
