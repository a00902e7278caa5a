package traffic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// jsonHeader checks the first line of a JSON Lines trace: an object with
// edgelimit_trace (the version) and optionally pops (a count or an array of
// names), duration_ms, identities, requests, classes, seed and comment. Other
// keys are skipped, as a CSV header's other "#" lines are: a later v1 may
// add keys.
func (rd *reader) jsonHeader(line []byte) error {
	var h jsonHead
	if err := json.Unmarshal(line, &h); err != nil || h.Version == "" {
		return rd.fail("want the header %s first, got %q", rd.versionLine(), clip(string(line)))
	}
	if h.Version != TraceVersion {
		return rd.fail("unknown version %q: this pop-sim reads %s", h.Version, TraceVersion)
	}
	if len(h.PoPs) > 0 {
		if err := rd.jsonPoPs(h.PoPs); err != nil {
			return err
		}
	}
	if h.Identities > 0 {
		if err := rd.setNumbered(strconv.Itoa(h.Identities)); err != nil {
			return err
		}
	}
	if len(h.Classes) > 0 {
		if err := rd.declareClasses(strings.Join(h.Classes, ",")); err != nil {
			return err
		}
	}
	if h.Requests > 0 {
		if err := rd.setRequests(strconv.Itoa(h.Requests)); err != nil {
			return err
		}
	}
	if h.Seed != nil {
		rd.seed, rd.seeded = *h.Seed, true
	}
	if h.DurationMs != "" {
		return rd.setEnd([]byte(h.DurationMs))
	}
	return nil
}

// jsonPoPs reads the header's pops: a count or an array of names.
func (rd *reader) jsonPoPs(raw json.RawMessage) error {
	var names []string
	if err := json.Unmarshal(raw, &names); err == nil {
		for _, n := range names {
			if strings.Contains(n, ",") {
				return rd.fail("pops: name %q has a comma", clip(n))
			}
		}
		return rd.setPoPs(strings.Join(names, ","))
	}
	if _, err := strconv.ParseUint(string(raw), 10, 31); err != nil {
		return rd.fail("pops %s: want a count or an array of names", clip(string(raw)))
	}
	return rd.setPoPs(string(raw))
}

// jsonReq is one request line of a JSON Lines trace.
type jsonReq struct {
	T        json.Number     `json:"t_ms"`
	Identity *string         `json:"identity"`
	PoP      json.RawMessage `json:"pop"` // an index, or a name
	Weight   json.Number     `json:"weight"`
	Class    *string         `json:"class"`
}

// jsonRecord decodes one request line and adds it: a plain line by
// fastJSON, any other by encoding/json.
func (rd *reader) jsonRecord(line []byte) error {
	if f, ok := fastJSON(line); ok {
		return rd.add(f)
	}
	f, err := slowJSON(line)
	if err != nil {
		return rd.fail("%s", err)
	}
	return rd.add(f)
}

// slowJSON decodes a request line with encoding/json; the error says what
// is wrong with it.
func slowJSON(line []byte) (field, error) {
	var q jsonReq
	if err := strictJSON(line, &q); err != nil {
		return field{}, fmt.Errorf("not a request object: %v", err)
	}
	switch {
	case q.T == "":
		return field{}, errors.New("missing t_ms")
	case q.Identity == nil:
		return field{}, errors.New("missing identity")
	case len(q.PoP) == 0:
		return field{}, errors.New("missing pop")
	case q.Weight == "":
		return field{}, errors.New("missing weight")
	}
	pop := []byte(q.PoP)
	if pop[0] == '"' {
		var s string
		if json.Unmarshal(pop, &s) != nil {
			return field{}, fmt.Errorf("pop %s: want an index or a name", clip(string(pop)))
		}
		pop = []byte(s)
	}
	f := field{t: []byte(q.T), identity: []byte(*q.Identity), pop: pop, weight: []byte(q.Weight)}
	if q.Class != nil {
		f.class, f.hasClass = []byte(*q.Class), true
	}
	return f, nil
}

// strictJSON decodes one JSON object, refusing unknown fields and anything
// after it.
func strictJSON(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errTrailing
	}
	return nil
}

var errTrailing = errors.New("more after the object")
