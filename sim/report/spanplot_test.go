package report

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// TestSpanPlotDrawsACurvePerMode: a crowd-span sweep of two modes draws
// two curves and the limit's line; a span that is not a duration is
// refused, with nothing written.
func TestSpanPlotDrawsACurvePerMode(t *testing.T) {
	pt := func(mode, v string, over float64) Point {
		return Point{Mode: mode, Param: "crowd-span", Value: v, Result: engine.Result{Mode: mode, MaxOveradmission: over}}
	}
	pts := []Point{pt("redis", "100ms", 1), pt("redis", "1s", 1), pt("redis", "10s", 1.09),
		pt("budget", "100ms", 1.5), pt("budget", "1s", 1.11), pt("budget", "10s", 1.09)}
	path := filepath.Join(t.TempDir(), "span.png")
	require.NoError(t, WriteSpanPlot(path, "test span", pts))
	f, err := os.Open(path)
	require.NoError(t, err, "opening the plot")
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err, "not a PNG")
	for k, mode := range []string{"redis", "budget"} {
		assert.GreaterOrEqual(t, pixels(img, img.Bounds(), curveColor(k)), 100, "%s: pixels of its colour, want its curve", mode)
	}
	assert.Zero(t, pixels(img, img.Bounds(), curveColor(2)), "pixels of a third curve's colour, with two modes")
	assert.NotZero(t, pixels(img, img.Bounds(), referenceColor), "the limit's line")

	bad := filepath.Join(t.TempDir(), "bad.png")
	assert.ErrorContains(t, WriteSpanPlot(bad, "bad", []Point{pt("redis", "soon", 1)}), `span "soon"`)
	assert.NoFileExists(t, bad, "nothing written for a bad span")
	assert.Error(t, WriteSpanPlot(bad, "none", nil), "no points")
}
