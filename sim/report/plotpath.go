package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CheckPlotPath reports whether WritePlot and WriteSpanPlot can write an
// image at path in the format its extension names, as they pick it
// (gonum's Plot.Save: .png, .svg, .pdf, .eps, .jpg, .tif, .tex), so that a
// caller can refuse a path without one before the work whose curve it
// would draw. It neither creates nor opens the file.
func CheckPlotPath(path string) error {
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if _, err := draw.NewFormattedCanvas(vg.Points(1), vg.Points(1), format); err != nil {
		return fmt.Errorf("plot %s: no image format of that extension (want .png, .svg or .pdf): %w", path, err)
	}
	return nil
}
