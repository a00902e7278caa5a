package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// writeLoad writes what each mode cost the Redis server (the modes that
// measured it), per decision so that traces of any size compare.
func writeLoad(w io.Writer, rs []engine.Result) error {
	var rows []engine.Result
	for _, r := range rs {
		if r.RedisLoad != nil && r.Decisions > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "redis load (from the server's INFO while each mode ran):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  mode\tscript calls\tcalls/dec\tscript s\tscript µs/dec\tredis cpu s\tcpu µs/dec\t")
	for _, r := range rows {
		l, d := r.RedisLoad, float64(r.Decisions)
		fmt.Fprintf(tw, "  %s\t%d\t%.4f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.Mode, l.ScriptCalls,
			float64(l.ScriptCalls)/d, l.ScriptSeconds, l.ScriptSeconds*1e6/d, l.CPUSeconds, l.CPUSeconds*1e6/d)
	}
	return tw.Flush()
}
