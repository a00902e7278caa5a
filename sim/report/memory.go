package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// writeMemory writes what each mode's state cost per identity it touched
// (the modes that measured it), beside the article's and Cloudflare's
// figures: Redis' used_memory grown during the mode per identity with
// keys (live by the run's clock: see engine.RedisMemory.ExpiredKeys), and
// the Go heap of the budget PoPs' views per view entry and per identity
// of the run (every PoP's view together).
func writeMemory(w io.Writer, rs []engine.Result) error {
	var rows []engine.Result
	for _, r := range rs {
		if r.Memory != nil {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "memory per identity, state still live at the mode's end (article: %d B for its two keys; Cloudflare: %d B):\n",
		engine.ArticleBytesPerIdentity, engine.CloudflareBytesPerIdentity)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  mode\tredis MB\tkeys\tidentities\tfields/hash\tredis B/id\tview MB\tview ids/PoP\tview B/entry\tview B/id\t")
	for _, r := range rows {
		red := []any{"-", "-", "-", "-", "-"}
		if m := r.Memory.Redis; m != nil {
			red = []any{f(float64(m.UsedBytes)/(1<<20), 1), m.Keys, m.Identities, fields(m.FieldsPerHash), f(m.BytesPerIdentity, 1)}
		}
		view := []any{"-", "-", "-", "-"}
		if v := r.Memory.View; v != nil {
			view = []any{f(float64(v.HeapBytes)/(1<<20), 1), f(v.EntriesPerPoP, 0), f(v.BytesPerEntry, 1), f(v.BytesPerIdentity, 1)}
		}
		fmt.Fprintf(tw, "  %s\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t\n", append(append([]any{r.Mode}, red...), view...)...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if m := r.Memory.Redis; m != nil && m.ExpiredKeys > 0 {
			fmt.Fprintf(w, "  %s: %d keys deleted before measuring, which Redis would have expired by the run's end had its clock been the run's (budget: past epochs' hashes; redis: keys past their TTL; with a deployment's expiry slack)\n", r.Mode, m.ExpiredKeys)
		}
	}
	return nil
}

// fields shows a mean of hash fields, "-" when the mode stores no hash.
func fields(v float64) string {
	if v == 0 {
		return "-"
	}
	return f(v, 2)
}
