package traffic

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzReadTrace: any file is refused with a *LineError or read into a
// trace every later stage can trust (sorted, PoPs and identities in range,
// weights from 1 to the limit, within its duration); it never panics.
func FuzzReadTrace(f *testing.F) {
	for _, s := range []string{
		head + "0,a,0,1\n1.5,b,3,20\n",
		"# edgelimit-trace v1\n# pops: fra,iad\n# identities: 3\n# classes: x,y\n" + csvColumns + ",class\n0,id2,iad,1,y\n",
		"# edgelimit-trace v1\n# requests: 1\n# duration_ms: 5\n" + csvColumns + "\n4.999999,\"q,\"\"r\",0,2\n",
		jhead + `{"t_ms":0,"identity":"a","pop":1,"weight":1,"class":"c"}`,
		`{"edgelimit_trace":"v1","pops":["a","b"],"identities":2}` + "\n" + `{"t_ms":1,"identity":"id1","pop":"b","weight":3}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, file string, jsonl bool) {
		format := CSV
		if jsonl {
			format = JSONL
		}
		o := readOpts()
		tr, err := ReadTrace(strings.NewReader(file), format, o)
		if err != nil {
			_, ok := err.(*LineError)
			require.False(t, !ok || strings.Contains(err.Error(), "\n"), "error %q: want a one-line *LineError", err)
			return
		}
		c := tr.Config
		require.False(t, c.Requests != len(tr.Requests) || c.Requests == 0 || c.PoPs < 1 || c.Identities < 1, "config %+v for %d requests", c, len(tr.Requests))
		for i, r := range tr.Requests {
			require.False(t, r.At < 0 || r.At >= tr.Duration || (i > 0 && r.At < tr.Requests[i-1].At) ||
				int(r.PoP) >= c.PoPs || r.PoP < 0 || int(r.ID) >= c.Identities || r.ID < 0 ||
				r.N < 1 || int64(r.N) > o.Limit,
				"request %d %+v out of range (duration %s, config %+v)", i, r, tr.Duration, c)
			if tr.ClassOf != nil {
				require.Less(t, int(tr.ClassOf[r.ID]), len(tr.Classes), "identity %d's class against the %d classes", r.ID, len(tr.Classes))
			}
		}
	})
}

// TestSampleReads reads the sample trace that ships in testdata.
func TestSampleReads(t *testing.T) {
	f, err := os.Open("testdata/sample.csv")
	require.NoError(t, err)
	defer f.Close()
	tr, err := ReadTrace(f, CSV, ReadOptions{PoPs: 8, Limit: 20, Window: 1e9})
	require.NoError(t, err)
	c := tr.Config
	require.False(t, c.PoPs != 4 || c.Requests != 2000 || c.Identities < 100 || c.Identities > 300 || tr.Classes != nil, "sample: %+v, classes %v; want 4 PoPs, 2000 requests, 100-300 identities, no classes", c, tr.Classes)
}

// FuzzFastJSON: a line the fast path accepts, encoding/json accepts too,
// with the same fields.
func FuzzFastJSON(f *testing.F) {
	for _, s := range []string{
		`{"t_ms":1.5,"identity":"a","pop":3,"weight":1}`,
		`{ "pop" : "fra" , "weight":2,"class":"c","identity":"1.2.3.4","t_ms":0 }`,
		`{"t_ms":1,"identity":"a\"b","pop":0,"weight":1}`,
		`{"t_ms":1e3,"identity":"","pop":-1,"weight":+1}`,
		`{"t_ms":1,"identity":"a","pop":0,"weight":1,"t_ms":2}`,
		`{"t_ms":1,"identity":"a","pop":0,"weight":1} x`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fast, ok := fastJSON([]byte(line))
		if !ok {
			return
		}
		slow, err := slowJSON([]byte(line))
		require.NoError(t, err, "%q: fast path accepted, encoding/json: %v", line, err)
		require.True(t, reflect.DeepEqual(norm(fast), norm(slow)), "%q: fast %+v, slow %+v", line, norm(fast), norm(slow))
	})
}

// norm makes a field comparable: strings for its byte slices.
func norm(f field) [6]string {
	return [6]string{string(f.t), string(f.identity), string(f.pop), string(f.weight), string(f.class), strconv.FormatBool(f.hasClass)}
}
