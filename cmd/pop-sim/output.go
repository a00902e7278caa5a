package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/edgelimit/edgelimit/sim/engine"

	"github.com/edgelimit/edgelimit/sim/report"
)

// output prints the report (table or JSON) and writes the sweep's CSV and
// plot, with their reference points, when asked.
func (o *options) output(rep report.Report, stdout io.Writer) error {
	var err error
	if o.json {
		err = report.WriteJSON(stdout, rep)
	} else {
		err = report.WriteTable(stdout, rep)
	}
	if err != nil {
		return err
	}
	refs := references(rep.Results)
	if rep.Reference != nil {
		refs = append([]engine.Result{*rep.Reference}, refs...)
	}
	if o.csv != "" {
		if err := writeFile(o.csv, func(w io.Writer) error { return report.WriteCSV(w, rep.Sweep, refs) }); err != nil {
			return err
		}
	}
	if o.plot != "" && o.sweepSpec.param == "crowd-span" {
		title := fmt.Sprintf("%s: worst over-admission against the crowd's span, %d PoPs, limit %d per %s",
			rep.Scenario, rep.PoPs, rep.Limit, time.Duration(rep.WindowMs)*time.Millisecond)
		return report.WriteSpanPlot(o.plot, title, rep.Sweep)
	}
	if o.plot != "" {
		title := fmt.Sprintf("%s: decision error against round trips saved, sweep of %s", rep.Scenario, o.sweepSpec.param)
		return report.WritePlot(o.plot, title, rep.Sweep, refs)
	}
	return nil
}

// references are the results the plot draws as reference points, and the
// CSV lists after the sweep: the run's referenceModes (pure Redis, local).
func references(results []engine.Result) []engine.Result {
	var refs []engine.Result
	for _, r := range results {
		if slices.Contains(referenceModes, r.Mode) {
			refs = append(refs, r)
		}
	}
	return refs
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
