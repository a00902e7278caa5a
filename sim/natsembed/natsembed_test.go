package natsembed

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/stretchr/testify/require"
)

func TestPublishSubscribe(t *testing.T) {
	s, err := Start()
	require.NoError(t, err)
	defer s.Stop()
	nc, err := nats.Connect(s.URL())
	require.NoError(t, err)
	defer nc.Close()
	sub, err := nc.SubscribeSync("x")
	require.NoError(t, err)
	err = nc.Publish("x", []byte("hi"))
	require.NoError(t, err)
	m, err := sub.NextMsg(5 * time.Second)
	require.False(t, err != nil || string(m.Data) != "hi", "got %v, %v", m, err)
}
