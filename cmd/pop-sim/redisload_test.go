package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"

	"github.com/stretchr/testify/require"
)

func TestParseLoad(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_evalsha:calls=120,usec=2400,usec_per_call=20.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_eval:calls=2,usec=600,usec_per_call=300.00\r\ncmdstat_hget:calls=9,usec=9\r\n" +
		"# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:2.500000\r\nused_cpu_sys_children:7.0\r\n"
	l := parseLoad(info)
	require.False(t, l.ScriptCalls != 122 || math.Abs(l.ScriptSeconds-0.003) > 1e-12 || l.CPUSeconds != 3.75, "parsed %+v, want 122 calls, 0.003 s, 3.75 s CPU", l)
}

// TestLoadMeterCountsScripts: on a real Redis, the meter sees exactly the
// script calls made between start and stop.
func TestLoadMeterCountsScripts(t *testing.T) {
	rdb, p := redistest.Client(t)
	ctx := context.Background()
	m := startLoad(ctx, p.Addr, false)
	for range 5 {
		err := rdb.Eval(ctx, "return 1", nil).Err()
		require.NoError(t, err)
	}
	l := m.stop(ctx)
	require.False(t, l == nil || l.ScriptCalls != 5 || l.ScriptSeconds <= 0, "load %+v, want 5 script calls with some time", l)
	require.Nil(t, startLoad(ctx, "", false).stop(ctx), "no address measured a load")
}

// TestLoadMeterSumsClusterMasters: on a real 3-master Redis Cluster, named
// by its node list or by one node, the meter counts the script calls of
// every master: keys spread over all three, so one node's INFO would see
// about a third.
func TestLoadMeterSumsClusterMasters(t *testing.T) {
	c, cl := redistest.Cluster(t)
	ctx := context.Background()
	for _, addr := range []string{strings.Join(cl.Addrs(), ","), cl.Addrs()[0]} {
		m := startLoad(ctx, addr, true)
		for i := range 30 {
			err := c.Eval(ctx, "return 1", []string{fmt.Sprintf("k%d", i)}).Err()
			require.NoError(t, err)
		}
		l := m.stop(ctx)
		require.False(t, l == nil || l.ScriptCalls != 30 || l.ScriptSeconds <= 0 || l.CPUSeconds <= 0, "%s: load %+v, want 30 script calls with some time", addr, l)
	}
}
