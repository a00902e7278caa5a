package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// doc accumulates the Markdown report.
type doc struct{ b strings.Builder }

func (d *doc) para(format string, args ...any) {
	fmt.Fprintf(&d.b, format, args...)
	d.b.WriteString("\n\n")
}

func (d *doc) heading(level int, text string) {
	d.b.WriteString(strings.Repeat("#", level) + " " + text + "\n\n")
}

// table writes a Markdown table; every row must have len(head) cells.
func (d *doc) table(head []string, rows [][]string) {
	d.b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	d.b.WriteString("|" + strings.Repeat(" --- |", len(head)) + "\n")
	for _, r := range rows {
		d.b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	d.b.WriteString("\n")
}

func (d *doc) String() string { return d.b.String() }

// thousands renders v rounded to an integer with comma separators.
func thousands(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// ns renders a duration in ns with one decimal.
func ns(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// ratio renders a/b as "1.23×", or "n/a" when either is missing.
func ratio(a, b float64) string {
	if a <= 0 || b <= 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "n/a"
	}
	r := a / b
	switch {
	case r >= 100:
		return strconv.FormatFloat(r, 'f', 0, 64) + "×"
	case r >= 10:
		return strconv.FormatFloat(r, 'f', 1, 64) + "×"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// allocs renders allocations per operation.
func allocs(v float64) string {
	if v < 0.005 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// verdict is "met" or "**goal missed**".
func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**goal missed**"
}

func itoa(v int) string { return strconv.Itoa(v) }
