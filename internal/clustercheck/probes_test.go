package clustercheck

import (
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbesCoverEveryMaster: for slot maps a cluster may have (even
// thirds, a master with many ranges, a master owning one slot, one master
// owning every slot, a range listing no node), probes gives
// ProbesPerMaster distinct keys per master, of the key shape asked
// (PlainKey or TaggedKey), each hashing into a range of that master. Caught mutations: one key per range or per
// map rather than per master, a master not told by its address when
// CLUSTER SLOTS gives no ID, the search stopping before a one-slot master
// has its keys.
func TestProbesCoverEveryMaster(t *testing.T) {
	node := func(id string) []goredis.ClusterNode {
		return []goredis.ClusterNode{{ID: id, Addr: "10.0.0.1:" + id}, {ID: id + "r", Addr: "10.0.0.2:" + id}}
	}
	cases := map[string][]goredis.ClusterSlot{
		"thirds": {{Start: 0, End: 5460, Nodes: node("a")}, {Start: 5461, End: 10922, Nodes: node("b")},
			{Start: 10923, End: 16383, Nodes: node("c")}},
		"fragmented": {{Start: 0, End: 99, Nodes: node("a")}, {Start: 100, End: 100, Nodes: node("b")},
			{Start: 101, End: 8000, Nodes: node("a")}, {Start: 8001, End: 16383, Nodes: node("c")}},
		"one master":  {{Start: 0, End: 16383, Nodes: node("a")}},
		"no node":     {{Start: 0, End: 8191, Nodes: node("a")}, {Start: 8192, End: 16383}},
		"no ID given": {{Start: 0, End: 8191, Nodes: []goredis.ClusterNode{{Addr: "x:1"}}}, {Start: 8192, End: 16383, Nodes: []goredis.ClusterNode{{Addr: "x:2"}}}},
	}
	for name, ranges := range cases {
		t.Run(name, func(t *testing.T) {
			owner := map[int]string{}
			for _, r := range ranges {
				for s := r.Start; s <= r.End; s++ {
					if len(r.Nodes) > 0 {
						owner[s] = r.Nodes[0].Addr
					}
				}
			}
			masters := map[string]bool{}
			for _, m := range owner {
				masters[m] = true
			}
			for shape, key := range map[string]func(int) string{"{": TaggedKey, "": PlainKey} {
				keys := probes(ranges, key)
				require.Len(t, keys, len(masters)*ProbesPerMaster, "keys %v", keys)
				per := map[string]int{}
				seen := map[string]bool{}
				for _, k := range keys {
					assert.True(t, strings.HasPrefix(k, shape+ProbePrefix), "key %q", k)
					assert.False(t, seen[k], "key %q twice", k)
					seen[k] = true
					m, ok := owner[Slot(k)]
					require.True(t, ok, "key %q in slot %d, which no master owns", k, Slot(k))
					per[m]++
				}
				for m := range masters {
					assert.Equal(t, ProbesPerMaster, per[m], "keys of master %s", m)
				}
			}
		})
	}
}
