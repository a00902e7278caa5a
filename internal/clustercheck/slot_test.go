package clustercheck

import (
	"context"
	"fmt"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlotRules: the CRC16 of the Redis Cluster specification (its check
// value: "123456789" gives 0x31C3) and its hash-tag rules, with no server.
// Caught mutations: another polynomial or initial value, the tag taken
// from the last '{' or to the last '}', an empty tag ("{}") used as the
// key's whole hash.
func TestSlotRules(t *testing.T) {
	require.Equal(t, uint16(0x31C3), crc16("123456789"), "the CRC16 check value")
	require.Equal(t, 0x31C3%Slots, Slot("123456789"))
	assert.Equal(t, Slot("user1000"), Slot("{user1000}.following"), "a tag hashes alone")
	assert.Equal(t, Slot("user1000"), Slot("foo{user1000}{bar}"), "the first tag")
	assert.Equal(t, Slot("a{b"), Slot("x{a{b}y"), "a tag runs from the first '{' to the next '}'")
	assert.Equal(t, int(crc16("foo{}{bar}")%Slots), Slot("foo{}{bar}"), "an empty tag: the whole key")
	assert.Equal(t, int(crc16("foo{bar")%Slots), Slot("foo{bar"), "no '}': the whole key")
	assert.Equal(t, int(crc16("}{")%Slots), Slot("}{"), "no '}' after the '{': the whole key")
}

// TestSlotAgreesWithRedis: Slot gives what a real cluster node's CLUSTER
// KEYSLOT gives, for keys with and without hash tags. Caught mutations:
// any Slot differing from the server's on one of those keys (a bit
// order, the modulo, a tag rule).
func TestSlotAgreesWithRedis(t *testing.T) {
	cc, _ := redistest.Cluster(t)
	ctx := context.Background()
	var keys []string
	for i := 0; i < 200; i++ {
		keys = append(keys, fmt.Sprint(ProbePrefix, i), fmt.Sprintf("el:{user:%d}:s:10/1s", i),
			fmt.Sprintf("a{}{%d}", i), fmt.Sprintf("{%d", i), fmt.Sprintf("\xff{x%d}\x00", i))
	}
	pipe := cc.Pipeline()
	cmds := make([]*goredis.IntCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.ClusterKeySlot(ctx, k)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err, "CLUSTER KEYSLOT")
	for i, k := range keys {
		assert.Equal(t, cmds[i].Val(), int64(Slot(k)), "slot of %q", k)
	}
}
