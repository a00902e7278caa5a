package traffic

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// WriteTrace writes tr in format f (docs/trace-format.md): the header with
// the version, its PoPs, duration, identities, requests, classes and, for a
// seeded trace (Trace.Seeded), its seed, comment as a free comment
// when not empty, then one request a line. Identity n is written "id<n>",
// the key the simulator gives it, so a replay has the same keys; the class
// column is written when tr has classes.
func WriteTrace(w io.Writer, tr *Trace, f Format, comment string) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	if f == JSONL {
		line = jsonHeader(tr, comment)
	} else {
		line = csvHead(tr, comment)
	}
	if _, err := bw.Write(line); err != nil {
		return err
	}
	classes := tr.Classes != nil && tr.ClassOf != nil
	for _, r := range tr.Requests {
		line = line[:0]
		class := ""
		if classes {
			class = tr.Classes[tr.ClassOf[r.ID]]
		}
		if f == JSONL {
			line = jsonRecord(line, r, class, classes)
		} else {
			line = csvRecord(line, r, class, classes)
		}
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// csvHead is the CSV header: version, comment, directives, columns.
func csvHead(tr *Trace, comment string) []byte {
	b := []byte(csvHeader + "\n")
	for l := range strings.Lines(comment) {
		b = append(append(b, "# "...), strings.TrimRight(l, "\r\n")...)
		b = append(b, '\n')
	}
	b = strconv.AppendInt(append(b, "# pops: "...), int64(tr.Config.PoPs), 10)
	b = appendMs(append(b, "\n# duration_ms: "...), tr.Duration)
	b = strconv.AppendInt(append(b, "\n# identities: "...), int64(tr.Config.Identities), 10)
	b = strconv.AppendInt(append(b, "\n# requests: "...), int64(len(tr.Requests)), 10)
	if cs := writtenClasses(tr); cs != nil {
		b = append(append(b, "\n# classes: "...), strings.Join(cs, ",")...)
	}
	if tr.Seeded {
		b = strconv.AppendUint(append(b, "\n# seed: "...), tr.Config.Seed, 10)
	}
	b = append(b, "\n"+csvColumns...)
	if tr.Classes != nil && tr.ClassOf != nil {
		b = append(b, ",class"...)
	}
	return append(b, '\n')
}

// writtenClasses are the class names a written trace declares: nil
// without classes.
func writtenClasses(tr *Trace) []string {
	if tr.Classes == nil || tr.ClassOf == nil {
		return nil
	}
	return tr.Classes
}

// csvColumns are the columns every CSV trace has, in order.
const csvColumns = "t_ms,identity,pop,weight"

func csvRecord(b []byte, r Request, class string, classes bool) []byte {
	b = appendMs(b, r.At)
	b = strconv.AppendInt(append(b, ",id"...), int64(r.ID), 10)
	b = strconv.AppendInt(append(b, ','), int64(r.PoP), 10)
	b = strconv.AppendInt(append(b, ','), int64(r.N), 10)
	if classes {
		b = append(append(b, ','), class...)
	}
	return append(b, '\n')
}

// jsonHead is the first line of a JSON Lines trace.
type jsonHead struct {
	Version    string          `json:"edgelimit_trace"`
	PoPs       json.RawMessage `json:"pops,omitempty"`        // a count, or an array of names
	DurationMs json.Number     `json:"duration_ms,omitempty"` // exact decimal
	Identities int             `json:"identities,omitempty"`  // identities are id0..id<N-1>
	Requests   int             `json:"requests,omitempty"`    // the count of request lines
	Classes    []string        `json:"classes,omitempty"`     // class names in order
	Seed       *uint64         `json:"seed,omitempty"`        // the seed of the run that made the trace
	Comment    string          `json:"comment,omitempty"`
}

func jsonHeader(tr *Trace, comment string) []byte {
	h := jsonHead{Version: TraceVersion, Comment: comment, Identities: tr.Config.Identities,
		Requests: len(tr.Requests), Classes: writtenClasses(tr),
		PoPs:       strconv.AppendInt(nil, int64(tr.Config.PoPs), 10),
		DurationMs: json.Number(appendMs(nil, tr.Duration))}
	if tr.Seeded {
		h.Seed = &tr.Config.Seed
	}
	b, _ := json.Marshal(h) // a struct of strings and numbers cannot fail
	return append(b, '\n')
}

func jsonRecord(b []byte, r Request, class string, classes bool) []byte {
	b = appendMs(append(b, `{"t_ms":`...), r.At)
	b = strconv.AppendInt(append(b, `,"identity":"id`...), int64(r.ID), 10)
	b = strconv.AppendInt(append(b, `","pop":`...), int64(r.PoP), 10)
	b = strconv.AppendInt(append(b, `,"weight":`...), int64(r.N), 10)
	if classes {
		b = strconv.AppendQuote(append(b, `,"class":`...), class)
	}
	return append(b, "}\n"...)
}
