package main

import "fmt"

// renderMemory writes table 3 and its goal: our Redis layout under the
// article's two-key layout.
func renderMemory(d *doc, n int, rows []memRow) {
	d.heading(2, "3. Memory per identity")
	d.para("%s identities, each holding the same sliding-window state where the layout allows (43 units in the "+
		"previous minute, 57 in this one, limit 100 per minute, with TTLs). Redis: `used_memory` grown ÷ identities, "+
		"each layout written to its own fresh private `redis-server` (ours and the two-key layout by "+
		"`backends/redis.MeasureMemoryPerIdentity`). Go: heap grown (`runtime.MemStats.HeapAlloc` after GC) ÷ identities. "+
		"Ratio = that row ÷ our figure of the same kind (Redis: `backends/redis`; Go heap: `backends/local`).",
		thousands(float64(n)))
	ref := map[string]float64{}
	for _, r := range rows {
		if _, ok := ref[r.where]; !ok && r.err == nil {
			ref[r.where] = r.perID
		}
	}
	var out [][]string
	for _, r := range rows {
		fig, rat := fmt.Sprintf("%.1f", r.perID), ratio(r.perID, ref[r.where])
		if r.err != nil {
			fig, rat = "failed: "+r.err.Error(), "n/a"
		}
		name := r.name
		if r.note != "" {
			name += " (" + r.note + ")"
		}
		out = append(out, []string{name, r.where, fig, rat})
	}
	d.table([]string{"layout", "where", "bytes per identity", "÷ ours"}, out)
	d.heading(3, "Goals")
	ours, two := rows[0], rows[1]
	ok := ours.err == nil && two.err == nil && ours.perID < two.perID
	d.table([]string{"goal", "figure", "target", "verdict"}, [][]string{{
		"our Redis layout ÷ the article's two-key layout", ratio(ours.perID, two.perID), "< 1", verdict(ok)}})
}
