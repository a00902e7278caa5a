package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
)

// tableCmd reads DIR/LINE.json for each LINE given and writes one aligned
// table (or, with -json, the Lines as one JSON array).
func tableCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("table", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the lines as one JSON array instead of the table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return fmt.Errorf("%w: want DIR and at least one LINE; %s", ErrReport, usage)
	}
	dir := fs.Arg(0)
	var ls []Line
	for _, name := range fs.Args()[1:] {
		l, err := readLine(dir, name)
		if err != nil {
			return err
		}
		ls = append(ls, l)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ls)
	}
	return writeTable(stdout, ls)
}

// columns are the table's heads; a pair "r/b" is pure Redis' figure, then
// budget's.
var columns = []string{"line", "over max r/b", "Δ", "contested class", "served % r/b", "units b/r",
	"wrongly lim r/b", "RTs saved %", "p99 ms r/b", "script µs/dec r/b", "b/r", "items/dec",
	"redis B/id r/b", "view B/entry", "view B/id", "lost r/b"}

// writeTable writes ls as one aligned table: a row per contested class of
// each line, the line's own figures on its first row only (a line without
// a contested class has one row, its class cells "-").
func writeTable(w io.Writer, ls []Line) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) {
		for _, c := range cells {
			fmt.Fprint(tw, c+"\t")
		}
		fmt.Fprintln(tw)
	}
	row(columns...)
	for _, l := range ls {
		classes := l.Classes
		if len(classes) == 0 {
			classes = []Class{{}}
		}
		for i, c := range classes {
			cls := []string{"-", "-", "-"}
			if c.Name != "" {
				cls = []string{c.Name, fmt.Sprintf("%.2f/%.2f", c.ServedRedis, c.ServedBudget), fmt.Sprintf("%.3f", c.Ratio)}
			}
			line := make([]string, 3)
			rest := make([]string, 10)
			if i == 0 {
				line = []string{l.Name, fmt.Sprintf("%.2f/%.2f", l.OverRedis, l.OverBudget), fmt.Sprintf("%+.2f", l.OverDelta)}
				rest = []string{fmt.Sprintf("%d/%d", l.WronglyLimitedRedis, l.WronglyLimitedBudget),
					fmt.Sprintf("%.2f", l.SavedPct), fmt.Sprintf("%.1f/%.1f", l.P99Redis, l.P99Budget),
					pair(l.ScriptUsRedis, l.ScriptUsBudget, 2), opt(l.ScriptRatio, 2), opt(l.ItemsPerDecision, 3),
					pair(l.RedisBytesRedis, l.RedisBytesBudget, 1), opt(l.ViewEntryBytes, 1), opt(l.ViewBytes, 1), pair(l.LostRedis, l.LostBudget, 0)}
			}
			row(append(append(line, cls...), rest...)...)
		}
	}
	return tw.Flush()
}

// opt shows v with prec decimals, "-" when nil.
func opt[T int64 | float64](v *T, prec int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, float64(*v))
}

// pair shows "a/b", each by opt.
func pair[T int64 | float64](a, b *T, prec int) string { return opt(a, prec) + "/" + opt(b, prec) }
