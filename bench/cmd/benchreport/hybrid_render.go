package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/edgelimit/edgelimit/sync/hybrid"
)

// renderHybrid writes table 3 and its goal: the hybrid 100× or more above
// pure-Redis decisions per second.
func renderHybrid(d *doc, e *env, rows []*hybridRow, sts []stall) {
	d.heading(2, "3. Hybrid: local-first decisions next to pure-Redis mode")
	d.para("The same %s warm identities, policy %s per %s (every identity far below it, the common case), "+
		"exactly N concurrent callers. The hybrid decides from its in-process view and reconciles with the "+
		"same private Redis in batches, either in a background loop every %s while timed, or only once after "+
		"the timed run (the decision path alone). Its round trips are counted by its `Stats()`, including a "+
		"final `Sync` after each timed run, so no hit is left unsent. Pure-Redis mode is `backends/redis`, one "+
		"script call per decision. Ratio = that row's decisions/s ÷ pure-Redis plain at the same callers.",
		thousands(float64(len(e.keys.keys))), thousands(redisMax), redisWindow, hybridSync)
	base := map[int]float64{}
	for _, r := range rows {
		if r.role == "base" {
			base[r.callers] = medianOf(r.raw).perSecond()
		}
	}
	var out [][]string
	var goals [][]string
	for _, r := range rows {
		f := medianOf(r.raw)
		local := "—"
		if r.isHybrid() {
			local = fmt.Sprintf("%.2f%%", 100*r.local)
		}
		out = append(out, []string{nameCell(&r.contender), strconv.Itoa(r.callers), thousands(f.perSecond()),
			ratio(f.perSecond(), base[r.callers]), fmt.Sprintf("%.2f", r.perK), local})
		if r.isHybrid() {
			x := f.perSecond() / base[r.callers]
			goals = append(goals, []string{fmt.Sprintf("hybrid (%s) ÷ pure-Redis, %d caller(s)", r.note, r.callers),
				ratio(f.perSecond(), base[r.callers]), "≥ 100×", verdict(x >= 100)})
		}
	}
	d.table([]string{"mode", "callers", "decisions/s", "÷ pure-Redis", "Redis round trips per 1,000 decisions", "decided locally"}, out)
	d.heading(3, "Goals")
	d.table([]string{"goal", "figure", "target", "verdict"}, goals)
	d.heading(3, "What a Sync costs the other clients of the Redis")
	d.para("One `Sync` of all %s identities, every one holding unsent hits (the hybrid's worst case, as when "+
		"every warm key was hit since the last reconcile), in round trips of up to %d identities each, while one "+
		"caller of `backends/redis` (plain) decides on the same Redis. Each batch is one Lua script that holds Redis's single thread while it runs; "+
		"`SyncShare` makes the Sync pause between batches to one node so that it takes at most that share of "+
		"the node's time.", thousands(float64(sts[0].identities)), hybrid.DefaultBatchSize)
	var tab [][]string
	for _, st := range sts {
		tab = append(tab, []string{fmt.Sprintf("%.1f", st.share), fmt.Sprint(st.trips), st.took.Round(time.Millisecond).String(),
			(st.took / time.Duration(max(st.trips, 1))).Round(time.Microsecond).String(),
			thousands(st.alone) + "/s", thousands(st.during) + "/s", ratio(st.during, st.alone)})
	}
	d.table([]string{"SyncShare", "round trips", "Sync took", "per round trip", "other caller, Redis idle just before", "other caller during the Sync", "÷ idle"}, tab)
	cs := make([]*contender, len(rows))
	outs := make([]*outcome, len(rows))
	for i, r := range rows {
		cs[i], outs[i] = &r.contender, r.out
	}
	if notes := outcomeNotes(cs, outs); notes != "" {
		d.para("%s", notes)
	}
}
