package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/edgelimit/edgelimit/sim/traffic"
)

// traceFiles are -trace and -write-trace (docs/trace-format.md).
type traceFiles struct {
	read    string         // -trace: replay this file instead of a scenario
	write   string         // -write-trace: save the scenario's trace here and exit
	loaded  *traffic.Trace // the -trace file, read and checked by loadTrace
	seedOwn bool           // the replay runs with the seed the file records
	made    int            // requests of the generated trace (theTrace)
}

// traceFlags registers -trace and -write-trace.
func (o *options) traceFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.tf.read, "trace", "", "replay a recorded trace FILE (.csv or .jsonl, docs/trace-format.md) instead of a scenario")
	fs.StringVar(&o.tf.write, "write-trace", "", "write the scenario's trace to FILE (.csv or .jsonl) and exit")
}

// loadTrace checks -trace, -write-trace and -rate against the other flags
// and reads the -trace file, whole and checked, before any work: its
// PoPs, identities and requests replace the flags'.
func (o *options) loadTrace(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.cfg.Scenario == "article" && (set["rate"] || set["write-trace"] || set["trace"]) {
		return fmt.Errorf("-rate, -trace and -write-trace do not apply to the article scenario")
	}
	if o.tf.write != "" {
		_, err := traffic.FormatOf(o.tf.write)
		if err == nil && o.tf.read != "" {
			err = fmt.Errorf("-write-trace saves a generated scenario: drop -trace")
		}
		return err
	}
	if o.tf.read == "" {
		return nil
	}
	for _, name := range []string{"scenario", "identities", "requests", "rate", "crowd-span"} {
		if set[name] {
			return fmt.Errorf("-trace replays a file with its own %s: drop -%s", name, name)
		}
	}
	return o.readTrace(set["pops"], set["seed"])
}

// readTrace reads o.tf.read; popsSet says -pops was given, so a file
// declaring another count is refused; seedSet says -seed was given, which
// then replaces the seed the file records (without one, the file's seed
// is used, so a replay draws the network the run that wrote it drew).
func (o *options) readTrace(popsSet, seedSet bool) error {
	path := o.tf.read
	format, err := traffic.FormatOf(path)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("trace: %v", err)
	}
	defer f.Close()
	c := o.cfg
	tr, err := traffic.ReadTrace(f, format, traffic.ReadOptions{PoPs: c.PoPs, PoPsFixed: popsSet,
		Limit: c.Limit, Window: c.Window})
	if err != nil {
		return fmt.Errorf("trace %s: %w", path, err)
	}
	tr.Config.Scenario = "trace:" + filepath.Base(path)
	if seedSet || !tr.Seeded {
		tr.Config.Seed = c.Seed
	}
	o.tf.seedOwn = tr.Seeded && !seedSet
	o.cfg, o.tf.loaded = tr.Config, tr
	return nil
}

// theTrace is the trace to simulate: the -trace file, or the scenario's.
func (o *options) theTrace() (*traffic.Trace, error) {
	if o.tf.loaded != nil {
		return o.tf.loaded, nil
	}
	tr, err := traffic.Generate(o.cfg)
	if err == nil {
		o.tf.made = len(tr.Requests)
	}
	return tr, err
}

// writeTrace generates the scenario's trace, writes it to -write-trace and
// says so on stdout.
func (o *options) writeTrace(stdout io.Writer) error {
	tr, err := traffic.Generate(o.cfg)
	if err != nil {
		return err
	}
	format, _ := traffic.FormatOf(o.tf.write) // checked by loadTrace
	c := o.cfg
	comment := fmt.Sprintf("written by pop-sim -scenario %s -seed %d -pops %d -identities %d -requests %d -limit %d -window %s",
		c.Scenario, c.Seed, c.PoPs, c.Identities, c.Requests, c.Limit, c.Window)
	if c.Rate > 0 {
		comment += fmt.Sprintf(" -rate %g", c.Rate)
	}
	err = writeFile(o.tf.write, func(w io.Writer) error { return traffic.WriteTrace(w, tr, format, comment) })
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %d requests of %s (%d PoPs, %s) to %s\n",
		len(tr.Requests), c.Scenario, c.PoPs, tr.Duration, o.tf.write)
	return err
}

// traceNotes say, under the table, where the trace came from when it was
// not the default length of a scenario.
func (o *options) traceNotes() []string {
	switch {
	case o.tf.loaded != nil:
		tr := o.tf.loaded
		return []string{fmt.Sprintf("trace: replayed from %s (%s): %d requests of %d identities at %d PoPs over %s; limit and window from the flags; %s",
			o.tf.read, strings.ToUpper(formatName(o.tf.read)), len(tr.Requests), tr.Config.Identities, tr.Config.PoPs, tr.Duration, o.seedNote())}
	case o.cfg.Rate > 0:
		return []string{o.rateNote()}
	}
	return nil
}

// rateNote says how long -rate made the trace, and the rate reached when
// the scenario could not spend the whole request budget (each identity's
// requests are bounded relative to the limit, so a short trace needs more
// identities).
func (o *options) rateNote() string {
	c := o.cfg
	d := c.Duration()
	note := fmt.Sprintf("trace: %g requests per second per PoP (-rate), so %d requests last %s", c.Rate, c.Requests, d)
	if o.tf.made > 0 && o.tf.made < c.Requests*99/100 {
		got := float64(o.tf.made) / d.Seconds() / float64(c.PoPs)
		note += fmt.Sprintf("; the scenario's %d identities made only %d of them (%.0f per second per PoP): raise -identities for the full rate",
			c.Identities, o.tf.made, got)
	}
	return note
}

func formatName(path string) string {
	f, _ := traffic.FormatOf(path)
	return f.String()
}

// seedNote says where a replay's seed came from.
func (o *options) seedNote() string {
	if o.tf.seedOwn {
		return fmt.Sprintf("seed %d recorded in the file", o.cfg.Seed)
	}
	return fmt.Sprintf("seed %d from the flags", o.cfg.Seed)
}
