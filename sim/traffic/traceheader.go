package traffic

import (
	"strconv"
	"strings"
)

// maxPoPs bounds a trace's PoPs, as Config.Validate does.
const maxPoPs = 1000

// csvVersion checks the first line of a CSV trace.
func (rd *reader) csvVersion(line []byte) error {
	s := strings.TrimSpace(string(line))
	if s == csvHeader {
		return nil
	}
	if v, ok := strings.CutPrefix(s, "# edgelimit-trace "); ok {
		return rd.fail("unknown version %q: this pop-sim reads %s", v, TraceVersion)
	}
	return rd.fail("want the header %q first, got %q", csvHeader, clip(s))
}

// directive reads a "# key: value" line of a CSV header: pops,
// duration_ms, identities, requests, classes or seed. Any other "#" line
// is a comment.
func (rd *reader) directive(line []byte) error {
	key, value, ok := strings.Cut(strings.TrimSpace(string(line[1:])), ":")
	if !ok {
		return nil
	}
	value = strings.TrimSpace(value)
	switch strings.TrimSpace(key) {
	case "pops":
		return rd.setPoPs(value)
	case "duration_ms":
		return rd.setEnd([]byte(value))
	case "identities":
		return rd.setNumbered(value)
	case "requests":
		return rd.setRequests(value)
	case "classes":
		return rd.declareClasses(value)
	case "seed":
		return rd.setSeed(value)
	}
	return nil
}

// setSeed reads seed: the seed of the run that made the trace.
func (rd *reader) setSeed(value string) error {
	if rd.seeded {
		return rd.fail("seed declared twice")
	}
	n, err := strconv.ParseUint(value, 10, 64)
	if err != nil {
		return rd.fail("seed %q: want a decimal number below 2^64", clip(value))
	}
	rd.seed, rd.seeded = n, true
	return nil
}

// csvColumns checks the column names: t_ms,identity,pop,weight and
// optionally class.
func (rd *reader) csvColumns(line []byte) error {
	switch s := strings.ReplaceAll(string(line), " ", ""); s {
	case csvColumns:
		rd.columns = 4
	case csvColumns + ",class":
		rd.columns = 5
	default:
		return rd.fail("want the columns %q (and optionally \",class\") before the first request, got %q",
			csvColumns, clip(s))
	}
	return nil
}

// setPoPs reads a pops declaration: a count, or comma-separated names
// (index i is the i-th name).
func (rd *reader) setPoPs(value string) error {
	if rd.popsSet {
		return rd.fail("pops declared twice")
	}
	rd.popsSet = true
	if n, ok := parseUint([]byte(value)); ok {
		return rd.declarePoPs(int(n))
	}
	names := strings.Split(value, ",")
	rd.popName = make(map[string]int16, len(names))
	for i, name := range names {
		name = strings.TrimSpace(name)
		if err := rd.popNameOK(name); err != nil {
			return err
		}
		rd.popName[name] = int16(min(i, maxPoPs))
	}
	return rd.declarePoPs(len(names))
}

// popNameOK checks one PoP name of the header.
func (rd *reader) popNameOK(name string) error {
	switch {
	case name == "":
		return rd.fail("pops: an empty name")
	case isDigits([]byte(name)):
		return rd.fail("pops: name %q is a number (a pop column's number is an index)", name)
	case rd.hasName(name):
		return rd.fail("pops: name %q twice", name)
	}
	return nil
}

func (rd *reader) hasName(name string) bool {
	_, ok := rd.popName[name]
	return ok
}

// declarePoPs sets the PoPs a header declared, checking the count against
// the limits and against the count asked for.
func (rd *reader) declarePoPs(n int) error {
	switch {
	case n < 1 || n > maxPoPs:
		return rd.fail("pops: %d PoPs, want 1 to %d", n, maxPoPs)
	case rd.o.PoPsFixed && n != rd.o.PoPs:
		return rd.fail("pops: the trace has %d PoPs, not the %d asked for", n, rd.o.PoPs)
	}
	rd.pops = n
	return nil
}

// declareClasses reads the header's classes: the class names in order.
func (rd *reader) declareClasses(value string) error {
	if msg := rd.classes.declare(value); msg != "" {
		return rd.fail("%s", msg)
	}
	return nil
}

// setEnd reads duration_ms: the trace lasts that long.
func (rd *reader) setEnd(value []byte) error {
	d, err := parseMs(value)
	if err != nil || d <= 0 {
		return rd.fail("duration_ms %q: want a positive number of milliseconds", clip(string(value)))
	}
	rd.end = d
	return nil
}

func isDigits(s []byte) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(s) > 0
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
