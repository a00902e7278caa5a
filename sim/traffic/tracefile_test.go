package traffic

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// readOpts reads against small's sizes.
func readOpts() ReadOptions {
	c := small("mixed")
	return ReadOptions{PoPs: c.PoPs, Limit: c.Limit, Window: c.Window}
}

func TestWriteThenReadIsTheSameTrace(t *testing.T) {
	for _, f := range []Format{CSV, JSONL} {
		for _, s := range Scenarios {
			c := small(s)
			c.Rate = 77 // a duration that is not a whole number of milliseconds
			tr, err := Generate(c)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteTrace(&buf, tr, f, "scenario "+s+"\nseed 7"); err != nil {
				t.Fatal(err)
			}
			o := readOpts()
			o.PoPs = 99 // the header's pops win
			got, err := ReadTrace(&buf, f, o)
			if err != nil {
				t.Fatalf("%s %s: %v", f, s, err)
			}
			if !reflect.DeepEqual(got.Requests, tr.Requests) || got.Duration != tr.Duration {
				t.Fatalf("%s %s: read back a different trace (duration %s, want %s)", f, s, got.Duration, tr.Duration)
			}
			if got.Config.PoPs != c.PoPs || got.Config.Requests != c.Requests || got.Config.Identities != c.Identities {
				t.Fatalf("%s %s: config %+v", f, s, got.Config)
			}
			if !reflect.DeepEqual(got.Classes[:len(tr.Classes)], tr.Classes) {
				t.Fatalf("%s %s: classes %v, want %v first", f, s, got.Classes, tr.Classes)
			}
			for _, r := range tr.Requests {
				if g, w := got.ClassOf[r.ID], tr.ClassOf[r.ID]; g != w {
					t.Fatalf("%s %s: identity %d of class %d, want %d", f, s, r.ID, g, w)
				}
			}
		}
	}
}

func TestMsDecimalsAreExact(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999, time.Millisecond, 1234567891, 60 * time.Second} {
		s := appendMs(nil, d)
		got, err := parseMs(s)
		if err != nil || got != d {
			t.Errorf("%d ns written %s read %d, %v", d, s, got, err)
		}
	}
	if got, _ := parseMs([]byte("1.23456789")); got != 1234567 {
		t.Errorf("1.23456789 ms read %d ns, want 1234567", got)
	}
}

func TestReadNamedPoPsQuotesAndDefaults(t *testing.T) {
	file := "# edgelimit-trace v1\r\n# from an nginx log\n# pops: fra, iad,sin\n" +
		"t_ms,identity,pop,weight\n\n0,\"2001:db8::1\",fra,1\n0.5,\"a,b\",2,3\n# a comment\n7,10.0.0.1,iad,1\n"
	tr, err := ReadTrace(strings.NewReader(file), CSV, readOpts())
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{{0, 0, 0, 1}, {500 * time.Microsecond, 1, 2, 3}, {7 * time.Millisecond, 2, 1, 1}}
	if !reflect.DeepEqual(tr.Requests, want) || tr.Config.PoPs != 3 || tr.Config.Identities != 3 ||
		tr.Duration != 8*time.Millisecond || tr.Classes != nil || tr.Config.Scenario != "trace" {
		t.Fatalf("got %+v, duration %s, config %+v", tr.Requests, tr.Duration, tr.Config)
	}
	jsonl := `{"edgelimit_trace":"v1","pops":["fra","iad"],"recorded_by":"a later v1 key"}` + "\n" +
		`{"t_ms":1,"identity":"k","pop":"iad","weight":2,"class":"api"}` + "\n" +
		`{"t_ms":2,"identity":"k","pop":0,"weight":1}` + "\n" +
		`{"t_ms":2,"identity":"j","pop":0,"weight":1}`
	tr, err = ReadTrace(strings.NewReader(jsonl), JSONL, readOpts())
	if err != nil {
		t.Fatal(err)
	}
	want = []Request{{time.Millisecond, 0, 1, 2}, {2 * time.Millisecond, 0, 0, 1}, {2 * time.Millisecond, 1, 0, 1}}
	if !reflect.DeepEqual(tr.Requests, want) || tr.Config.PoPs != 2 ||
		!reflect.DeepEqual(tr.Classes, []string{"api", "unclassified"}) || !reflect.DeepEqual(tr.ClassOf, []uint8{0, 1}) {
		t.Fatalf("got %+v, config %+v, classes %v", tr.Requests, tr.Config, tr.Classes)
	}
}
