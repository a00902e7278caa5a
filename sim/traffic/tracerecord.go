package traffic

import (
	"bytes"
	"encoding/csv"
	"math"
	"time"
)

// field is one request's fields as read, before they are checked.
type field struct {
	t, identity, pop, weight, class []byte
	hasClass                        bool
}

// csvRecord splits a CSV request line (quoted fields only when it has a
// quote) and adds it.
func (rd *reader) csvRecord(line []byte) error {
	var fixed [5][]byte
	var parts [][]byte
	if bytes.IndexByte(line, '"') < 0 {
		parts = splitComma(fixed[:0], line)
	} else {
		rec, err := csv.NewReader(bytes.NewReader(line)).Read()
		if err != nil {
			return rd.fail("bad quoting: %v", err)
		}
		for _, s := range rec {
			parts = append(parts, []byte(s))
		}
	}
	if len(parts) != rd.columns {
		return rd.fail("%d fields, want %d (%s)", len(parts), rd.columns, rd.columnNames())
	}
	f := field{t: parts[0], identity: parts[1], pop: parts[2], weight: parts[3]}
	if rd.columns == 5 {
		f.class, f.hasClass = parts[4], true
	}
	return rd.add(f)
}

// splitComma appends line's comma-separated fields to parts.
func splitComma(parts [][]byte, line []byte) [][]byte {
	for {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			return append(parts, line)
		}
		parts, line = append(parts, line[:i]), line[i+1:]
	}
}

// columnNames are the columns of the file's records.
func (rd *reader) columnNames() string {
	if rd.columns == 5 {
		return csvColumns + ",class"
	}
	return csvColumns
}

// add checks one request's fields and appends it.
func (rd *reader) add(f field) error {
	t, err := rd.time(f.t)
	if err != nil {
		return err
	}
	pop, err := rd.pop(f.pop)
	if err != nil {
		return err
	}
	n, err := rd.weight(f.weight)
	if err != nil {
		return err
	}
	id, err := rd.identity(f)
	if err != nil {
		return err
	}
	if rd.want > 0 && len(rd.reqs) == rd.want {
		return rd.fail("more requests than the header's %d", rd.want)
	}
	rd.reqs = append(rd.reqs, Request{At: t, ID: id, PoP: pop, N: n})
	return nil
}

// time checks t_ms: a number of milliseconds, not before the previous
// request's, before the header's duration_ms.
func (rd *reader) time(s []byte) (time.Duration, error) {
	t, err := parseMs(s)
	switch {
	case len(s) > 0 && s[0] == '-':
		return 0, rd.fail("t_ms %q is negative", clip(string(s)))
	case err != nil:
		return 0, rd.fail("t_ms %q is not a number of milliseconds", clip(string(s)))
	case len(rd.reqs) > 0 && t < rd.reqs[len(rd.reqs)-1].At:
		prev := rd.reqs[len(rd.reqs)-1].At
		return 0, rd.fail("t_ms %s is before the previous request's %s: the trace must be sorted by time", s, appendMs(nil, prev))
	case rd.end > 0 && t >= rd.end:
		return 0, rd.fail("t_ms %s is not before the header's duration_ms %s", s, appendMs(nil, rd.end))
	}
	return t, nil
}

// pop checks the pop column: an index below the PoPs, or a name the header
// declared.
func (rd *reader) pop(s []byte) (int16, error) {
	if n, ok := parseUint(s); ok {
		if n >= int64(rd.pops) {
			return 0, rd.fail("unknown PoP %d: the trace has %d PoPs, 0 to %d", n, rd.pops, rd.pops-1)
		}
		return int16(n), nil
	}
	if p, ok := rd.popName[string(s)]; ok {
		return p, nil
	}
	switch {
	case len(s) == 0:
		return 0, rd.fail("empty pop")
	case isDigits(s) || s[0] == '-' && isDigits(s[1:]):
		return 0, rd.fail("unknown PoP %s: the trace has %d PoPs, 0 to %d", s, rd.pops, rd.pops-1)
	case rd.popName == nil:
		return 0, rd.fail("unknown PoP %q: the header names no PoPs, so give an index 0 to %d", clip(string(s)), rd.pops-1)
	}
	return 0, rd.fail("unknown PoP %q: not among the header's pops", clip(string(s)))
}

// weight checks the weight column: a whole number from 1 to the limit.
func (rd *reader) weight(s []byte) (int16, error) {
	n, ok := parseUint(s)
	switch {
	case len(s) > 0 && s[0] == '-':
		return 0, rd.fail("weight %s is negative: want 1 to the limit %d", clip(string(s)), rd.o.Limit)
	case !ok:
		return 0, rd.fail("weight %q is not a whole number", clip(string(s)))
	case n == 0:
		return 0, rd.fail("weight 0: want 1 to the limit %d", rd.o.Limit)
	case n > rd.o.Limit:
		return 0, rd.fail("weight %d is above the limit %d", n, rd.o.Limit)
	case n > math.MaxInt16:
		return 0, rd.fail("weight %d is above %d, the most one request may weigh", n, math.MaxInt16)
	}
	return int16(n), nil
}

// identity numbers the identity column's string, and records its class.
func (rd *reader) identity(f field) (int32, error) {
	if len(f.identity) == 0 {
		return 0, rd.fail("empty identity")
	}
	id, err := rd.number(f.identity)
	if err != nil {
		return 0, err
	}
	if err := rd.classes.note(id, f.class); err != "" {
		return 0, rd.fail("identity %q: %s", clip(string(f.identity)), err)
	}
	return id, nil
}
