package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestRestartSamePortAndReconnect(t *testing.T) {
	s := Start(t)
	nc := s.Connect(t)
	got := make(chan string, 16)
	if _, err := nc.Subscribe("t.x", func(m *nats.Msg) { got <- string(m.Data) }); err != nil {
		t.Fatal(err)
	}
	publishUntil(t, nc, got, "one")
	s.Shutdown()
	if s.Running() {
		t.Fatal("still running after Shutdown")
	}
	if err := nc.Publish("t.x", []byte("while-down")); err != nil {
		t.Fatalf("publish while down must buffer, got %v", err)
	}
	s.Restart()
	publishUntil(t, nc, got, "two")
}

func publishUntil(t *testing.T, nc *nats.Conn, got chan string, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		_ = nc.Publish("t.x", []byte(want))
		select {
		case m := <-got:
			if m == want {
				return
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("message %q never arrived", want)
}
