package main

import (
	"fmt"
	"io"
	"os"

	"github.com/edgelimit/edgelimit/sim/report"
)

// output prints the report (table or JSON) and writes the sweep's CSV and
// plot when asked.
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
	if o.csv != "" {
		if err := writeFile(o.csv, func(w io.Writer) error { return report.WriteCSV(w, rep.Sweep) }); err != nil {
			return err
		}
	}
	if o.plot != "" {
		title := fmt.Sprintf("hybrid, %s, sweep of %s", rep.Scenario, o.sweepSpec.param)
		return report.WritePlot(o.plot, title, rep.Sweep)
	}
	return nil
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
