package natstest

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

func TestRestartSamePortAndReconnect(t *testing.T) {
	s := Start(t)
	nc := s.Connect(t)
	got := make(chan string, 16)
	_, err := nc.Subscribe("t.x", func(m *nats.Msg) { got <- string(m.Data) })
	require.NoError(t, err)
	publishUntil(t, nc, got, "one")
	s.Shutdown()
	require.False(t, s.Running(), "still running after Shutdown")
	err = nc.Publish("t.x", []byte("while-down"))
	require.NoError(t, err, "publish while down must buffer, got %v", err)
	s.Restart()
	publishUntil(t, nc, got, "two")
}

func publishUntil(t *testing.T, nc *nats.Conn, got chan string, want string) {
	t.Helper()
	// Publishing again every 50 ms until the message comes back is the wait
	// (a route or subscription may not be up yet); 30 s is what a hang trips.
	deadline := time.Now().Add(30 * time.Second)
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
	require.FailNow(t, fmt.Sprintf("message %q never arrived", want))
}
