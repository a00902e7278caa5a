package metrics_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// histogramOf finds the histogram of family name whose first label value
// is first.
func histogramOf(t *testing.T, reg *prometheus.Registry, name, first string) *dto.Histogram {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err, "gather")
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == first {
					return m.GetHistogram()
				}
			}
		}
	}
	require.FailNow(t, fmt.Sprintf("no %s{...%q...} gathered", name, first))
	return nil
}

func histogramCount(t *testing.T, reg *prometheus.Registry, name, label string) uint64 {
	return histogramOf(t, reg, name, label).GetSampleCount()
}

func histogramSum(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	return histogramOf(t, reg, name, label).GetSampleSum()
}

// wantCounters checks every series of counter family name: the ones in
// want (keyed by their label values joined by "/", in label-name order)
// have those values, all others are zero.
func wantCounters(t *testing.T, reg *prometheus.Registry, name string, want map[string]float64) {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err, "gather")
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var vals []string
			for _, l := range m.GetLabel() {
				vals = append(vals, l.GetValue())
			}
			got[strings.Join(vals, "/")] = m.GetCounter().GetValue()
		}
	}
	for k, v := range got {
		assert.Equal(t, want[k], v, "%s{%s} = %v, want %v", name, k, v, want[k])
	}
	for k, v := range want {
		_, ok := got[k]
		assert.True(t, ok, "%s{%s} missing, want %v", name, k, v)
	}
}

// labels renders label pairs as "name=value ...".
func labels(ls []*dto.LabelPair) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.GetName() + "=" + l.GetValue()
	}
	return strings.Join(parts, " ")
}
