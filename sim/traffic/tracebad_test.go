package traffic

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const head = "# edgelimit-trace v1\nt_ms,identity,pop,weight\n"

const jhead = `{"edgelimit_trace":"v1"}` + "\n"

// TestBadTraceFiles: each bad file is refused with a *LineError naming the
// line and what was wrong, in one line.
func TestBadTraceFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		f          Format
		line       int
		want       string
	}{
		{"empty file", "", CSV, 1, "empty file"},
		{"empty jsonl", "", JSONL, 1, "empty file"},
		{"header only", head, CSV, 2, "before any request"},
		{"no header", "0,a,0,1\n", CSV, 1, "want the header"},
		{"unknown version", "# edgelimit-trace v2\n" + "t_ms,identity,pop,weight\n0,a,0,1\n", CSV, 1, `unknown version "v2"`},
		{"unknown version jsonl", `{"edgelimit_trace":"v9"}` + "\n", JSONL, 1, `unknown version "v9"`},
		{"no columns", "# edgelimit-trace v1\n0,a,0,1\n", CSV, 2, "want the columns"},
		{"unsorted", head + "5,a,0,1\n4.5,b,0,1\n", CSV, 4, "before the previous request's 5"},
		{"unsorted jsonl", jhead + `{"t_ms":2,"identity":"a","pop":0,"weight":1}` + "\n" + `{"t_ms":1,"identity":"a","pop":0,"weight":1}`, JSONL, 3, "sorted by time"},
		{"negative time", head + "-1,a,0,1\n", CSV, 3, "negative"},
		{"pop beyond -pops", head + "0,a,4,1\n", CSV, 3, "unknown PoP 4: the trace has 4 PoPs"},
		{"pop beyond header", "# edgelimit-trace v1\n# pops: 2\n" + csvColumns + "\n0,a,2,1\n", CSV, 4, "unknown PoP 2"},
		{"pop not named", "# edgelimit-trace v1\n# pops: fra,iad\n" + csvColumns + "\n0,a,sin,1\n", CSV, 4, `unknown PoP "sin": not among`},
		{"pop name no header", head + "0,a,fra,1\n", CSV, 3, "names no PoPs"},
		{"negative pop", head + "0,a,-1,1\n", CSV, 3, "unknown PoP -1"},
		{"negative weight", head + "0,a,0,-2\n", CSV, 3, "weight -2 is negative"},
		{"zero weight", head + "0,a,0,0\n", CSV, 3, "weight 0"},
		{"weight above limit", head + "0,a,0,21\n", CSV, 3, "above the limit 20"},
		{"negative weight jsonl", jhead + `{"t_ms":0,"identity":"a","pop":0,"weight":-1}`, JSONL, 2, "negative"},
		{"truncated line", head + "0,a,0,1\n1,b,0\n", CSV, 4, "3 fields, want 4"},
		{"truncated jsonl", jhead + `{"t_ms":0,"identity":"a","pop":0,"weight":1}` + "\n" + `{"t_ms":1,"identity":"a","po`, JSONL, 3, "not a request object"},
		{"missing field jsonl", jhead + `{"t_ms":0,"identity":"a","pop":0}`, JSONL, 2, "missing weight"},
		{"unknown field jsonl", jhead + `{"t_ms":0,"identity":"a","pop":0,"weight":1,"colour":"red"}`, JSONL, 2, "unknown field"},
		{"too many fields", head + "0,a,0,1,x\n", CSV, 3, "5 fields, want 4"},
		{"non-numeric time", head + "soon,a,0,1\n", CSV, 3, `t_ms "soon" is not a number`},
		{"non-numeric weight", head + "0,a,0,heavy\n", CSV, 3, `weight "heavy" is not a whole number`},
		{"fractional weight", head + "0,a,0,1.5\n", CSV, 3, "not a whole number"},
		{"empty identity", head + "0,,0,1\n", CSV, 3, "empty identity"},
		{"after duration", "# edgelimit-trace v1\n# duration_ms: 10\n" + csvColumns + "\n10,a,0,1\n", CSV, 4, "not before the header's duration_ms 10"},
		{"pops count differs", "# edgelimit-trace v1\n# pops: 3\n", CSV, 2, "not the 4 asked for"},
		{"class changes", "# edgelimit-trace v1\n" + csvColumns + ",class\n0,a,0,1,calm\n1,a,0,1,bursts\n", CSV, 4, `identity "a": class bursts, but calm before`},
		{"not numbered", "# edgelimit-trace v1\n# identities: 5\n" + csvColumns + "\n0,id4,0,1\n1,id5,0,1\n", CSV, 5, "want id0 to id4"},
		{"leading zero", "# edgelimit-trace v1\n# identities: 5\n" + csvColumns + "\n0,id01,0,1\n", CSV, 4, "want id0 to id4"},
		{"bad identities", "# edgelimit-trace v1\n# identities: lots\n", CSV, 2, "want a count"},
		{"cut short", "# edgelimit-trace v1\n# requests: 3\n" + csvColumns + "\n0,a,0,1\n1,a,0,1\n", CSV, 5, "after 2 requests, the header declares 3"},
		{"too many", jhead[:len(jhead)-2] + `,"requests":1}` + "\n" + `{"t_ms":0,"identity":"a","pop":0,"weight":1}` + "\n" + `{"t_ms":0,"identity":"a","pop":0,"weight":1}`, JSONL, 3, "more requests than the header's 1"},
		{"undeclared class", "# edgelimit-trace v1\n# classes: calm,bursts\n" + csvColumns + ",class\n0,a,0,1,bots\n", CSV, 4, `class "bots" is not among the header's classes`},
		{"bad seed", "# edgelimit-trace v1\n# seed: -3\n", CSV, 2, `seed "-3": want a decimal number`},
		{"seed twice", "# edgelimit-trace v1\n# seed: 3\n# seed: 4\n", CSV, 3, "seed declared twice"},
		{"bad seed jsonl", `{"edgelimit_trace":"v1","seed":-1}` + "\n", JSONL, 1, "want the header"},
		{"long line", head + strings.Repeat("x", maxLine+10) + "\n", CSV, 3, "longer than"},
	} {
		o := readOpts()
		o.PoPsFixed = tc.name == "pops count differs"
		_, err := ReadTrace(strings.NewReader(tc.file), tc.f, o)
		var le *LineError
		if !assert.ErrorAs(t, err, &le, "%s: want a *LineError", tc.name) {
			continue
		}
		assert.Equal(t, tc.line, le.Line, "%s: the line named in %v", tc.name, err)
		assert.Contains(t, err.Error(), tc.want, "%s: what the error says", tc.name)
		assert.NotContains(t, err.Error(), "\n", "%s: the error is one line", tc.name)
	}
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]Format{"a.csv": CSV, "b.JSONL": JSONL, "c.ndjson": JSONL} {
		f, err := FormatOf(path)
		if assert.NoError(t, err, "%s", path) {
			assert.Equal(t, want, f, "%s: format", path)
		}
	}
	_, err := FormatOf("trace.txt")
	require.Error(t, err, "trace.txt accepted")
}
