package budget

import (
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeyspace: a limit's Keyspace names its namespace, Max and window
// (the window in its largest exact unit, as backends/redis spells it), ""
// standing for "el"; distinct limits have distinct ones, and none holds a
// brace, which would move the keys' hash tag.
func TestKeyspace(t *testing.T) {
	for _, c := range []struct {
		ns   string
		lim  core.Limit
		want string
	}{
		{"", core.PerWindow(10, time.Second), "el:10/1s"},
		{"el", core.PerWindow(10, time.Second), "el:10/1s"},
		{"api", core.PerWindow(1000, time.Hour), "api:1000/1h"},
		{"el", core.PerWindow(7, 1500*time.Millisecond), "el:7/1500ms"},
		{"el", core.PerWindow(100, 90*time.Second), "el:100/90s"},
		{"el", core.PerWindow(5, 2*time.Minute), "el:5/2m"},
		{"el", core.PerWindow(3, 7*24*time.Hour), "el:3/7d"},
	} {
		assert.Equal(t, c.want, Keyspace(c.ns, c.lim), "Keyspace(%q, %d per %s)", c.ns, c.lim.Max, c.lim.Window)
	}
	seen := map[string]core.Limit{}
	for _, max := range []int64{1, 10, 60, 1000, 3600} {
		for _, w := range []time.Duration{time.Millisecond, 10 * time.Millisecond, time.Second, 1001 * time.Millisecond,
			time.Minute, 61 * time.Second, time.Hour, 24 * time.Hour, 25 * time.Hour, 60 * time.Second * 1000} {
			l := core.PerWindow(max, w)
			ks := Keyspace("el", l)
			prev, dup := seen[ks]
			assert.False(t, dup, "%d per %s and %d per %s share Keyspace %q", prev.Max, prev.Window, max, w, ks)
			seen[ks] = l
			assert.False(t, strings.ContainsAny(ks, "{}"), "Keyspace %q holds a brace", ks)
		}
	}
}

// TestPoPsOfOneLimitShareKeys: Machines of one limit and namespace agree on
// every key whatever else of their Config differs (PoP, Incarnation,
// FreeCredit, NoWait, PoPs, a Namespace of "" against "el"), and a Machine
// of another Max or window has none of their keys; every key keeps its
// hash tag.
func TestPoPsOfOneLimitShareKeys(t *testing.T) {
	lim := core.PerWindow(100, 10*time.Second)
	machine := func(cfg Config) *Machine {
		cfg.Buckets, cfg.Groups = 64, 4
		m, err := NewMachine(cfg)
		require.NoError(t, err)
		return m
	}
	a := machine(Config{PoP: "fra", Incarnation: 1, Limit: lim, PoPs: 4})
	same := []*Machine{
		machine(Config{PoP: "sin", Incarnation: 99, Limit: lim, PoPs: 8, FreeCredit: -1, NoWait: true}),
		machine(Config{PoP: "iad", Incarnation: 7, Limit: lim, PoPs: 4, Namespace: "el", FreeCredit: 2}),
	}
	other := []*Machine{
		machine(Config{PoP: "fra", Incarnation: 1, Limit: core.PerWindow(101, 10*time.Second), PoPs: 4}),
		machine(Config{PoP: "fra", Incarnation: 1, Limit: core.PerWindow(100, 11*time.Second), PoPs: 4}),
	}
	for b := range 64 {
		for x := int64(2_000); x < 2_004; x++ {
			k := a.BucketKey(b, x)
			require.True(t, strings.HasPrefix(k, "{el:100/10s:g"), "key %s carries its limit in its hash tag", k)
			require.Equal(t, 1, strings.Count(k, "{"), "key %s: one hash tag", k)
			for i, m := range same {
				assert.Equal(t, k, m.BucketKey(b, x), "PoP %d of the same limit: bucket %d, window %d", i, b, x)
			}
			for i, m := range other {
				assert.NotEqual(t, k, m.BucketKey(b, x), "another limit %d: bucket %d, window %d", i, b, x)
			}
		}
	}
	for g := range 4 {
		for i, m := range same {
			assert.Equal(t, a.tag(g), m.tag(g), "PoP %d of the same limit: group %d's tag", i, g)
		}
		for i, m := range other {
			assert.NotEqual(t, a.tag(g), m.tag(g), "another limit %d: group %d's tag", i, g)
		}
	}
}
