package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
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
	began := time.Now()
	return func(done int) {
		pct := done * 100 / p.total
		if pct == p.last {
			return
		}
		p.last = pct
		fmt.Fprintf(p.w, "\r%s", barLine(mode, done, p.total, time.Since(began)))
	}
}

// barLine is the progress line of mode after done of total decisions in
// took: the bar, the share done, the decisions per second so far and the
// time left at that rate.
func barLine(mode string, done, total int, took time.Duration) string {
	pct := done * 100 / total
	bar := strings.Repeat("#", pct/4) + strings.Repeat(".", 25-pct/4)
	line := fmt.Sprintf("%-16s [%s] %3d%%", mode, bar, pct)
	if done == 0 || took <= 0 {
		return line
	}
	rate := float64(done) / took.Seconds()
	left := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
	return line + fmt.Sprintf("  %.0f decisions/s, %v left ", rate, left)
}

// done clears the bar's line.
func (p *progress) done() {
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 90))
	}
}
