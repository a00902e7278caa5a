package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/sim/engine"
)

func sample() Report {
	return Report{Scenario: "mixed", Seed: 1, PoPs: 2, Identities: 3, Requests: 4,
		Results: []engine.Result{{Mode: "redis", Decisions: 4, RedisRoundTrips: 4, RoundTripsPerDecision: 1},
			{Mode: "local", Decisions: 4, RoundTripsSavedPct: 100}},
		Sweep: []Point{{Mode: "hybrid", Param: "margin", Value: "0", Result: engine.Result{Mode: "hybrid", DecisionErrorPct: 1, RoundTripsSavedPct: 90}},
			{Mode: "hybrid", Param: "margin", Value: "0.2", Result: engine.Result{Mode: "hybrid", DecisionErrorPct: 0.5, RoundTripsSavedPct: 80}}}}
}

func TestTableIsAligned(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, sample()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want title, header, 2 modes, 2 sweep points:\n%s", len(lines), b.String())
	}
	for _, l := range lines[2:] {
		if len(l) != len(lines[1]) {
			t.Fatalf("row %q not as wide as the header %q", l, lines[1])
		}
	}
	if !strings.Contains(b.String(), "hybrid margin=0.2") {
		t.Fatal("sweep row unlabelled")
	}
}

func TestCSVAndPlot(t *testing.T) {
	var b bytes.Buffer
	rep := sample()
	if err := WriteCSV(&b, rep.Sweep, rep.Results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("csv has %d lines, want header, 2 points, 2 references:\n%s", len(lines), b.String())
	}
	for k, lead := range []string{"mode,param,value,", "hybrid,margin,0,", "hybrid,margin,0.2,", "redis,,,", "local,,,"} {
		if !strings.HasPrefix(lines[k], lead) {
			t.Errorf("csv line %d %q, want it led by %q", k, lines[k], lead)
		}
	}
	png := filepath.Join(t.TempDir(), "sweep.png")
	if err := WritePlot(png, "test", sample().Sweep, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Fatalf("no PNG written: %v", err)
	}
}
