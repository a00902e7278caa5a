package article

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints tables A and B aligned, with the article's own figures
// beside ours.
func WriteTable(w io.Writer, r Result) error {
	b, m := r.Boundary, r.Memory
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "A. boundary burst, limit %d per %ds: %d requests at the end of window 0, %d at the start of window 1\n",
		b.Limit, b.WindowMs/1000, b.Limit, b.Limit)
	fmt.Fprintln(tw, "algorithm\tadmitted\tof\tarticle")
	fmt.Fprintf(tw, "fixed window\t%d\t%d\t200\n", b.Fixed, b.Sent)
	fmt.Fprintf(tw, "sliding window counter\t%d\t%d\t102\n", b.Sliding, b.Sent)
	fmt.Fprintf(tw, "exact sliding log\t%d\t%d\t(exact: %d)\n", b.Log, b.Sent, b.Limit)
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "B. memory of one identity after %d requests (MEMORY USAGE), and used_memory per identity over %d identities\n",
		m.Requests, m.Identities)
	fmt.Fprintln(tw, "measure\tbytes\t\tarticle")
	fmt.Fprintf(tw, "exact log (sorted set)\t%d\t\t1029400\n", m.LogBytes)
	fmt.Fprintf(tw, "sliding counter key(s)\t%d\t\t96\n", m.SlidingBytes)
	fmt.Fprintf(tw, "ratio log / sliding\t%.0f×\t\t10723×\n", m.Ratio)
	fmt.Fprintf(tw, "used_memory per identity, our layout\t%.0f\t\t\n", m.UsedMemoryPerIdentity)
	fmt.Fprintf(tw, "used_memory per identity, two keys rl:user:NNNNNNNN:W\t%.0f\t\t\n", m.UsedMemoryPerIdentityTwoKey)
	return tw.Flush()
}
