package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// progress draws a line on stderr when, and only when, stderr is a
// terminal: one mode's bar, rate and time left, or, with modes running at
// the same time, each one's share done and time left on the one line.
type progress struct {
	w     io.Writer
	total int
	tty   bool
	lines bool // -progress-lines: "progress DONE TOTAL" lines for a parent pop-sim (apart.go)
	mu    sync.Mutex
	live  []*modeProgress // modes running, in the order they started
	last  string          // the line last drawn
}

// modeProgress is one running mode's progress.
type modeProgress struct {
	mode  string
	began time.Time
	done  int
	pct   int // share done when last drawn
}

func newProgress(w io.Writer, total int, lines bool) *progress {
	return &progress{w: w, total: max(total, 1), tty: isTerminal(w) && !lines, lines: lines}
}

// setTotal sets the decisions a mode makes, when known only once a mode
// runs (a parent pop-sim learns it from its children's lines).
func (p *progress) setTotal(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = max(total, 1)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// start returns the callback a mode reports its progress to (safe for
// concurrent use), or nil when there is no terminal to draw on; call
// end, never nil, when the mode is over.
func (p *progress) start(mode string) (report func(done int), end func()) {
	if p.lines {
		return p.lineReport(), func() {}
	}
	if !p.tty {
		return nil, func() {}
	}
	m := &modeProgress{mode: mode, began: time.Now(), pct: -1}
	p.mu.Lock()
	p.live = append(p.live, m)
	p.mu.Unlock()
	report = func(done int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		m.done = done
		if pct := done * 100 / p.total; pct != m.pct { // redraw once a percent
			m.pct = pct
			p.draw()
		}
	}
	end = func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.live = slices.DeleteFunc(p.live, func(x *modeProgress) bool { return x == m })
		p.draw()
	}
	return report, end
}

// lineReport writes "progress DONE TOTAL" once a percent.
func (p *progress) lineReport() func(done int) {
	last := -1
	return func(done int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if pct := done * 100 / p.total; pct != last {
			last = pct
			fmt.Fprintf(p.w, "progress %d %d\n", done, p.total)
		}
	}
}

// draw redraws the line (held p.mu): the one running mode's barLine, or
// every running mode's shortLine.
func (p *progress) draw() {
	var line string
	switch len(p.live) {
	case 0:
	case 1:
		m := p.live[0]
		line = barLine(m.mode, m.done, p.total, time.Since(m.began))
	default:
		parts := make([]string, len(p.live))
		for i, m := range p.live {
			parts[i] = shortLine(m.mode, m.done, p.total, time.Since(m.began))
		}
		line = strings.Join(parts, " | ")
	}
	pad := max(len(p.last)-len(line), 0)
	p.last = line
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
}

// barLine is the progress line of mode after done of total decisions in
// took: the bar, the share done, the decisions per second so far and the
// time left at that rate.
func barLine(mode string, done, total int, took time.Duration) string {
	pct := done * 100 / total
	bar := strings.Repeat("#", pct/4) + strings.Repeat(".", 25-pct/4)
	line := fmt.Sprintf("%-16s [%s] %3d%%", mode, bar, pct)
	left, ok := timeLeft(done, total, took)
	if !ok {
		return line
	}
	return line + fmt.Sprintf("  %.0f decisions/s, %v left ", float64(done)/took.Seconds(), left)
}

// shortLine is one of several running modes' part of the line: its share
// done and its time left at its rate so far.
func shortLine(mode string, done, total int, took time.Duration) string {
	line := fmt.Sprintf("%s %3d%%", mode, done*100/total)
	if left, ok := timeLeft(done, total, took); ok {
		line += fmt.Sprintf(" %v left", left)
	}
	return line
}

// timeLeft is the time the rest of total takes at the rate of done in
// took; false when there is no rate yet.
func timeLeft(done, total int, took time.Duration) (time.Duration, bool) {
	if done == 0 || took <= 0 {
		return 0, false
	}
	rate := float64(done) / took.Seconds()
	return time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second), true
}

// done clears the bar's line.
func (p *progress) done() {
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", max(90, len(p.last))))
	}
}
