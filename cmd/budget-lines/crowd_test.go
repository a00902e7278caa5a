package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sim/traffic"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallCrowd is a crowd small enough to check request by request.
func smallCrowd(span time.Duration) crowdConfig {
	return crowdConfig{PoPs: 4, Limit: 20, Window: time.Second, Times: 10, Crowd: 6, Calm: 30,
		CalmReqs: 200, Span: span, Duration: 6 * time.Second, Seed: 7}
}

// TestCrowdTraceSendsTenTimesTheLimitFromEveryPoP: at each span, every
// crowd identity sends Times × Limit units, the same share from each PoP,
// all within the span from its start (half the trace plus its stagger),
// the calm identities send CalmReqs requests in all, the trace is sorted,
// and the file pop-sim reads back holds the same requests and classes.
func TestCrowdTraceSendsTenTimesTheLimitFromEveryPoP(t *testing.T) {
	for _, span := range []time.Duration{100 * time.Millisecond, time.Second, 2 * time.Second} {
		c := smallCrowd(span)
		tr, err := crowdTrace(c)
		require.NoError(t, err, "span %s", span)
		units := map[int32]int{}
		perPoP := map[[2]int32]int{}
		first, last := map[int32]time.Duration{}, map[int32]time.Duration{}
		calm := 0
		for i, r := range tr.Requests {
			require.True(t, i == 0 || tr.Requests[i-1].At <= r.At, "span %s: request %d at %s before the one before", span, i, r.At)
			if int(r.ID) >= c.Crowd {
				calm++
				assert.True(t, r.At >= 0 && r.At < c.Duration, "span %s: calm request at %s outside the trace", span, r.At)
				continue
			}
			units[r.ID] += int(r.N)
			perPoP[[2]int32{r.ID, int32(r.PoP)}]++
			if _, ok := first[r.ID]; !ok {
				first[r.ID] = r.At
			}
			last[r.ID] = r.At
		}
		assert.Equal(t, c.CalmReqs, calm, "span %s: calm requests", span)
		require.Len(t, units, c.Crowd, "span %s: crowd identities", span)
		for id, u := range units {
			assert.Equal(t, c.Times*c.Limit, u, "span %s: id%d's units, want %d× the limit of %d", span, id, c.Times, c.Limit)
			for p := range c.PoPs {
				assert.Equal(t, c.Times*c.Limit/c.PoPs, perPoP[[2]int32{id, int32(p)}], "span %s: id%d's requests from PoP %d, want an equal share", span, id, p)
			}
			start := (c.Duration/2 + time.Duration(id)*(c.Window/10)/time.Duration(c.Crowd)).Truncate(time.Microsecond)
			assert.Equal(t, start, first[id], "span %s: id%d's first request", span, id)
			assert.True(t, last[id] < start+span && last[id] > start+span*9/10, "span %s: id%d's last request at %s, want within the span from %s and near its end", span, id, last[id], start)
		}

		var b bytes.Buffer
		require.NoError(t, traffic.WriteTrace(&b, tr, traffic.CSV, "test"))
		back, err := traffic.ReadTrace(&b, traffic.CSV, traffic.ReadOptions{Limit: int64(c.Limit), Window: c.Window})
		require.NoError(t, err, "span %s: reading the written trace back", span)
		assert.Equal(t, tr.Requests, back.Requests, "span %s: the requests read back", span)
		assert.Equal(t, []string{"crowd10x", "calm"}, back.Classes, "span %s: the classes read back", span)
		assert.Equal(t, c.Crowd+c.Calm, back.Config.Identities, "span %s: identities read back", span)
	}
}

// TestCrowdRefusesBadConfigurations: each configuration no trace can hold
// is refused with ErrCrowd, and the command exits 2 with one line on
// stderr and nothing on stdout.
func TestCrowdRefusesBadConfigurations(t *testing.T) {
	for name, edit := range map[string]func(*crowdConfig){
		"no PoP":             func(c *crowdConfig) { c.PoPs = 0 },
		"no crowd":           func(c *crowdConfig) { c.Crowd = 0 },
		"zero limit":         func(c *crowdConfig) { c.Limit = 0 },
		"calm without reqs":  func(c *crowdConfig) { c.CalmReqs = 0 },
		"no span":            func(c *crowdConfig) { c.Span = 0 },
		"span past the end":  func(c *crowdConfig) { c.Span = 3 * time.Second },
		"shorter than 2 win": func(c *crowdConfig) { c.Duration = c.Window },
	} {
		c := smallCrowd(time.Second)
		edit(&c)
		_, err := crowdTrace(c)
		assert.True(t, errors.Is(err, ErrCrowd), "%s: error %v, want ErrCrowd", name, err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"crowd", "-span", "0s"}, &out, &errOut)
	assert.Equal(t, 2, code, "exit code of a crowd without a span")
	assert.Empty(t, out.String(), "nothing written on a refused configuration")
	assert.Equal(t, 1, strings.Count(errOut.String(), "\n"), "one line on stderr: %q", errOut.String())
	assert.Contains(t, errOut.String(), ErrCrowd.Error(), "the line names the refusal")
}
