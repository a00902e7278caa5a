package main

import (
	"fmt"
	"strconv"
)

// renderRedis writes table 2 and its goals.
func renderRedis(d *doc, e *env, rows []*redisRow, rb redisBenchFigures) {
	d.heading(2, "2. Redis path: decisions per second at one private Redis")
	d.para("Every decision is one script call at the private `redis-server` (Redis %s) on loopback, from this "+
		"process's go-redis v9 client (pool of %d connections, `ContextTimeoutEnabled` as the README recommends), keys drawn from %s identities, a policy every "+
		"call is admitted under (%s per %s). Columns are exactly N concurrent callers (goroutines). "+
		"`redis-benchmark` runs `EVALSHA` of our own `sliding.lua` on the same server in the same run, with "+
		"`-c` = the column's callers and `-r %d` random keys of the same form (`el:{user:NNNNNNNNNNNN}:%s`). "+
		"Each cell: decisions/s, then that row ÷ our plain mode at the same callers.",
		e.server, poolSize, thousands(float64(len(e.keys.keys))), thousands(redisMax), redisWindow, len(e.keys.keys),
		redisSuffix)
	plain := rows[0].figs
	head := []string{"limiter"}
	for _, c := range callerCounts {
		head = append(head, strconv.Itoa(c)+" caller(s)")
	}
	var out [][]string
	for _, r := range rows {
		line := []string{nameCell(&r.contender)}
		for ci := range callerCounts {
			line = append(line, cell(r.figs[ci].perSecond(), plain[ci].perSecond()))
		}
		out = append(out, line)
	}
	rbLine := func(name string, v []float64) []string {
		line := []string{name}
		for ci := range callerCounts {
			line = append(line, cell(v[ci], plain[ci].perSecond()))
		}
		return line
	}
	out = append(out, rbLine("redis-benchmark EVALSHA sliding.lua, `-c` callers (physical limit, unpipelined)", rb.plain))
	out = append(out, rbLine("redis-benchmark EVALSHA sliding.lua, `-c` callers `-P 32` (physical limit, pipelined)", rb.piped))
	d.table(head, out)
	piped := rows[1]
	var trips []string
	for ci, c := range callerCounts {
		if t := piped.trips[ci]; t > 0 {
			trips = append(trips, fmt.Sprintf("%d callers: %.2f calls per round trip", c, 1/t))
		}
	}
	d.para("Implicit pipelining shared round trips as follows (from `Stats()`): %s. "+
		"redis-benchmark with `-c 50` (the reference the speed goals below are set against): %s/s unpipelined, %s/s with `-P 32`.",
		orNone(trips), thousands(rb.c50), thousands(rb.c50P))
	d.heading(3, "Goals")
	d.table([]string{"goal", "figure", "target", "verdict"}, redisGoals(rows, rb))
	if notes := redisNotes(rows); notes != "" {
		d.para("%s", notes)
	}
}

// cell renders "12,345/s (0.95×)" where the ratio is v ÷ ref.
func cell(v, ref float64) string {
	return thousands(v) + "/s (" + ratio(v, ref) + ")"
}

// redisGoals are the project's Redis speed goals: pure-Redis mode at 90% or more of
// redis-benchmark's unpipelined EVALSHA rate (judged for the plain mode and,
// separately, with implicit pipelining on: both are pure-Redis modes, every
// decision one atomic script call), and pipelined mode at twice redis_rate's
// rate or more at 64 callers.
func redisGoals(rows []*redisRow, rb redisBenchFigures) [][]string {
	plain, piped, rr := rows[0].figs, rows[1].figs, rows[2].figs
	last := len(callerCounts) - 1
	var out [][]string
	r := plain[last].perSecond() / rb.c50
	out = append(out, []string{"ours plain at 64 callers ÷ redis-benchmark `-c 50` unpipelined",
		fmt.Sprintf("%.2f", r), "≥ 0.90", verdict(r >= 0.9)})
	for ci, c := range callerCounts {
		r := plain[ci].perSecond() / rb.plain[ci]
		out = append(out, []string{fmt.Sprintf("ours plain ÷ redis-benchmark unpipelined, both %d caller(s)", c),
			fmt.Sprintf("%.2f", r), "≥ 0.90", verdict(r >= 0.9)})
	}
	if floor := floorRow(rows); floor != nil {
		for ci, c := range callerCounts {
			f := floor.figs[ci].perSecond()
			out = append(out, []string{fmt.Sprintf("Go floor (bare socket) ÷ redis-benchmark unpipelined, both %d caller(s): what a Go process can reach at all", c),
				fmt.Sprintf("%.2f", f/rb.plain[ci]), "(no target)", "—"},
				[]string{fmt.Sprintf("ours plain ÷ Go floor, %d caller(s): what go-redis and our code cost", c),
					fmt.Sprintf("%.2f", plain[ci].perSecond()/f), "(no target)", "—"})
		}
	}
	for ci, c := range callerCounts {
		r := piped[ci].perSecond() / rb.plain[ci]
		out = append(out, []string{fmt.Sprintf("ours WithPipelining ÷ redis-benchmark unpipelined, both %d caller(s)", c),
			fmt.Sprintf("%.2f", r), "≥ 0.90", verdict(r >= 0.9)})
	}
	r = piped[last].perSecond() / rr[last].perSecond()
	out = append(out, []string{"ours WithPipelining ÷ redis_rate, 64 callers", fmt.Sprintf("%.2f", r), "≥ 2", verdict(r >= 2)})
	r = piped[last].perSecond() / rb.c50P
	out = append(out, []string{"ours WithPipelining at 64 callers ÷ redis-benchmark `-c 50 -P 32` (how far towards the pipelined limit)",
		fmt.Sprintf("%.2f", r), "(no target)", "—"})
	return out
}

func redisNotes(rows []*redisRow) string {
	cs := make([]*contender, len(rows))
	outs := make([]*outcome, len(rows))
	for i, r := range rows {
		cs[i], outs[i] = &r.contender, r.out
	}
	return outcomeNotes(cs, outs)
}

// floorRow returns the bare-socket row, or nil.
func floorRow(rows []*redisRow) *redisRow {
	for _, r := range rows {
		if r.role == "floor" {
			return r
		}
	}
	return nil
}
