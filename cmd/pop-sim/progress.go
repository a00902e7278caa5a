package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// progress draws a bar on stderr when, and only when, stderr is a terminal.
type progress struct {
	w     io.Writer
	total int
	tty   bool
	last  int
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, total: max(total, 1), tty: isTerminal(w)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// start returns the callback a mode reports its progress to, or nil when
// there is no terminal to draw on.
func (p *progress) start(mode string) func(done int) {
	if !p.tty {
		return nil
	}
	p.last = -1
	return func(done int) {
		pct := done * 100 / p.total
		if pct == p.last {
			return
		}
		p.last = pct
		bar := strings.Repeat("#", pct/4) + strings.Repeat(".", 25-pct/4)
		fmt.Fprintf(p.w, "\r%-16s [%s] %3d%%", mode, bar, pct)
	}
}

// done clears the bar's line.
func (p *progress) done() {
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 50))
	}
}
