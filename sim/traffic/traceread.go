package traffic

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"
)

// ReadOptions are what a recorded trace is read against.
type ReadOptions struct {
	PoPs      int   // PoPs of a file whose header declares none
	PoPsFixed bool  // PoPs was asked for: a file declaring another count is refused
	Limit     int64 // units admitted per window: no request may weigh more
	Window    time.Duration
}

// LineError is what is wrong with a trace file, at the line it is on.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// maxLine bounds one line of a trace file.
const maxLine = 1 << 16

// ReadTrace reads a trace file in format f (docs/trace-format.md) line by
// line, never holding more of the file than one line, and checks every line
// as it goes: the first problem is a *LineError. Identities are numbered in
// order of first appearance (their names are not kept), or, when the header
// declares identities: N, named id0 to id<N-1> and numbered so; the Config has the
// file's PoPs, identities and requests, o's limit and window, and scenario
// "trace". The trace lasts until the header's duration_ms, or else to the
// end of the millisecond of its last request. A header's requests: N makes
// room for them at once and is checked at the end.
func ReadTrace(r io.Reader, f Format, o ReadOptions) (*Trace, error) {
	if o.Limit < 1 || o.Window <= 0 {
		return nil, errors.New("read trace: limit and window must be positive")
	}
	rd := newReader(f, o)
	br := bufio.NewReaderSize(r, maxLine)
	for {
		line, err := readLine(br)
		if err == io.EOF {
			return rd.finish()
		}
		rd.line++
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, rd.fail("longer than %d bytes", maxLine)
		}
		if err != nil {
			return nil, err
		}
		if err := rd.parse(line); err != nil {
			return nil, err
		}
	}
}

// readLine returns the next line without its end ("\n" or "\r\n"), the
// last one even without an end, then io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// stage is where in a file the reader is.
type stage int

const (
	wantVersion stage = iota // the first line
	wantColumns              // CSV: directives, then the column names
	wantRecords              // one request a line
)

// reader is ReadTrace's state between lines.
type reader struct {
	f        Format
	o        ReadOptions
	line     int
	stage    stage
	columns  int // CSV: fields a record has (4, or 5 with a class)
	pops     int
	popsSet  bool             // the header declared the PoPs
	popName  map[string]int16 // the header's PoP names, if any
	end      time.Duration    // the header's duration_ms; 0 if none
	numbered int              // the header's identities: N, all named id<k>; 0 if none
	want     int              // the header's requests: N; 0 if none
	seed     uint64           // the header's seed, if seeded
	seeded   bool             // the header declared a seed
	ids      map[string]int32 // without numbered: names by order of appearance
	classes
	reqs []Request
}

func newReader(f Format, o ReadOptions) *reader {
	return &reader{f: f, o: o, pops: o.PoPs, ids: map[string]int32{},
		classes: newClasses()}
}

// fail is a *LineError at the current line.
func (rd *reader) fail(format string, args ...any) error {
	return &LineError{Line: rd.line, Msg: fmt.Sprintf(format, args...)}
}

// parse reads one line.
func (rd *reader) parse(line []byte) error {
	switch {
	case rd.stage == wantVersion && rd.f == JSONL:
		rd.stage = wantRecords
		return rd.jsonHeader(line)
	case rd.stage == wantVersion:
		rd.stage = wantColumns
		return rd.csvVersion(line)
	case len(line) == 0:
		return nil
	case rd.f == JSONL:
		return rd.jsonRecord(line)
	case line[0] == '#':
		if rd.stage == wantColumns {
			return rd.directive(line)
		}
		return nil
	case rd.stage == wantColumns:
		rd.stage = wantRecords
		return rd.csvColumns(line)
	}
	return rd.csvRecord(line)
}

// finish checks the file was not empty and builds the trace.
func (rd *reader) finish() (*Trace, error) {
	if rd.line == 0 {
		return nil, &LineError{Line: 1, Msg: "empty file: want the header " + rd.versionLine()}
	}
	if len(rd.reqs) == 0 {
		return nil, rd.fail("end of file before any request")
	}
	if rd.want > 0 && len(rd.reqs) != rd.want {
		return nil, rd.fail("end of file after %d requests, the header declares %d: is the file cut short?", len(rd.reqs), rd.want)
	}
	c := Config{Scenario: "trace", PoPs: rd.pops, Identities: rd.identities(),
		Requests: len(rd.reqs), Limit: rd.o.Limit, Window: rd.o.Window, Seed: rd.seed}
	dur := rd.end
	if dur == 0 {
		dur = rd.reqs[len(rd.reqs)-1].At.Truncate(time.Millisecond) + time.Millisecond
	}
	tr := &Trace{Config: c, Duration: dur, Requests: rd.reqs, Seeded: rd.seeded}
	tr.Classes, tr.ClassOf = rd.classes.result(c.Identities)
	return tr, nil
}

// versionLine is the header a file of rd's format must start with.
func (rd *reader) versionLine() string {
	if rd.f == JSONL {
		return `{"edgelimit_trace":"` + TraceVersion + `",...}`
	}
	return csvHeader
}
