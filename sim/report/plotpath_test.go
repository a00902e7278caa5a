package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckPlotPathByExtension checks that CheckPlotPath accepts the
// image extensions the plots can be saved as (in any case) and refuses a
// path with none or another, as Plot.Save would only after drawing. It
// catches a check that accepts every path.
func TestCheckPlotPathByExtension(t *testing.T) {
	for _, ok := range []string{"c.png", "dir/c.PNG", "c.svg", "c.pdf"} {
		assert.NoError(t, CheckPlotPath(ok), ok)
	}
	for _, bad := range []string{"curve", "c.csv", "c.png.txt", "dir.png/c"} {
		assert.Error(t, CheckPlotPath(bad), bad)
	}
}
