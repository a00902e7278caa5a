package main

import (
	"context"
	"math"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
)

func TestParseLoad(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_evalsha:calls=120,usec=2400,usec_per_call=20.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_eval:calls=2,usec=600,usec_per_call=300.00\r\ncmdstat_hget:calls=9,usec=9\r\n" +
		"# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:2.500000\r\nused_cpu_sys_children:7.0\r\n"
	l := parseLoad(info)
	if l.ScriptCalls != 122 || math.Abs(l.ScriptSeconds-0.003) > 1e-12 || l.CPUSeconds != 3.75 {
		t.Fatalf("parsed %+v, want 122 calls, 0.003 s, 3.75 s CPU", l)
	}
}

// TestLoadMeterCountsScripts: on a real Redis, the meter sees exactly the
// script calls made between start and stop.
func TestLoadMeterCountsScripts(t *testing.T) {
	rdb, p := redistest.Client(t)
	ctx := context.Background()
	m := startLoad(ctx, p.Addr)
	for range 5 {
		if err := rdb.Eval(ctx, "return 1", nil).Err(); err != nil {
			t.Fatal(err)
		}
	}
	l := m.stop(ctx)
	if l == nil || l.ScriptCalls != 5 || l.ScriptSeconds <= 0 {
		t.Fatalf("load %+v, want 5 script calls with some time", l)
	}
	if startLoad(ctx, "a:1,b:2").stop(ctx) != nil {
		t.Fatal("a cluster's node list measured a load")
	}
}
