package report

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// frontierSample is a sweep of two modes and two references, placed so
// that the plot's top-left corner, where the legend goes, holds no data:
// every point is at the bottom or on the right.
func frontierSample() ([]Point, []engine.Result) {
	pt := func(mode, v string, errPct, saved float64) Point {
		return Point{Mode: mode, Param: "sync-interval", Value: v,
			Result: engine.Result{Mode: mode, DecisionErrorPct: errPct, RoundTripsSavedPct: saved}}
	}
	pts := []Point{pt("budget", "0", 12, 98), pt("budget", "0.1", 10.5, 60), pt("budget", "0.3", 10.4, 52),
		pt("budget-nowait", "0", 20, 97.9), pt("budget-nowait", "0.1", 21, 97.8), pt("budget-nowait", "0.3", 22, 97.7)}
	refs := []engine.Result{{Mode: "redis", DecisionErrorPct: 10.7}, {Mode: "local", DecisionErrorPct: 36, RoundTripsSavedPct: 100}}
	return pts, refs
}

// render writes a plot of pts and refs to a temporary PNG and decodes it.
func render(t *testing.T, pts []Point, refs []engine.Result) image.Image {
	t.Helper()
	path := filepath.Join(t.TempDir(), "frontier.png")
	require.NoError(t, WritePlot(path, "test frontier", pts, refs), "writing the plot")
	f, err := os.Open(path)
	require.NoError(t, err, "opening the plot")
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err, "not a PNG")
	return img
}

// pixels counts the pixels of img within r that are exactly c.
func pixels(img image.Image, r image.Rectangle, c color.Color) int {
	want := color.RGBAModel.Convert(c)
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == want {
				n++
			}
		}
	}
	return n
}

// topLeft is the corner of img the legend is drawn in: a third of its
// width, a quarter of its height.
func topLeft(img image.Image) image.Rectangle {
	b := img.Bounds()
	return image.Rect(b.Min.X, b.Min.Y, b.Min.X+b.Dx()/3, b.Min.Y+b.Dy()/4)
}

func TestPlotDrawsOneCurvePerModeWithALegend(t *testing.T) {
	pts, refs := frontierSample()
	img := render(t, pts, refs)
	b := img.Bounds()
	require.True(t, b.Dx() >= 600 && b.Dy() >= 400 && b.Dx() > b.Dy(), "image %v, want a landscape 9×6 in figure", b)
	for k, mode := range []string{"budget", "budget-nowait"} {
		assert.GreaterOrEqual(t, pixels(img, img.Bounds(), curveColor(k)), 100, "%s: pixels of its colour, want its curve's points", mode)
		assert.NotZero(t, pixels(img, topLeft(img), curveColor(k)), "%s: not in the legend (no pixel of its colour top left)", mode)
	}
	assert.NotZero(t, pixels(img, topLeft(img), referenceColor), "references not in the legend")
}

func TestPlotOfOneModeHasOneCurve(t *testing.T) {
	pts, _ := frontierSample()
	img := render(t, pts[:3], nil)
	assert.GreaterOrEqual(t, pixels(img, img.Bounds(), curveColor(0)), 100, "budget: pixels of its colour, want its curve")
	assert.Zero(t, pixels(img, img.Bounds(), curveColor(1)), "pixels of a second curve's colour, with one mode")
	assert.Zero(t, pixels(img, img.Bounds(), referenceColor), "pixels of the references' colour, with none")
}

func TestPlotOfOnePointPerMode(t *testing.T) {
	pts, refs := frontierSample()
	img := render(t, []Point{pts[0], pts[3]}, refs[:1])
	for k := range 2 {
		assert.GreaterOrEqual(t, pixels(img, img.Bounds(), curveColor(k)), 20, "mode %d: pixels of its colour, want its point", k)
	}
}
