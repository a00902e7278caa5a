package main

import (
	"fmt"
	"strconv"
)

// skips says why mode cannot run at the swept value v, or "" when it can:
// hybrid-escrow needs a margin above 0 (hybrid.Config: Escrow acts within
// the Margin). A sweep skips such a value for that mode alone and says so
// in the report's notes.
func (sp sweepSpec) skips(mode, v string) string {
	if mode != "hybrid-escrow" || sp.param != "margin" {
		return ""
	}
	if m, _ := strconv.ParseFloat(v, 64); m == 0 {
		return "escrow acts within the margin, so needs one above 0"
	}
	return ""
}

// sweepNotes name the values the sweep skips for a mode, and why.
func (o *options) sweepNotes() []string {
	var n []string
	_, swept := o.plan()
	sp := o.sweepSpec
	for _, m := range swept {
		for _, v := range sp.values {
			if why := sp.skips(m, v); why != "" {
				n = append(n, fmt.Sprintf("sweep: %s skips %s=%s (%s)", m, sp.param, v, why))
			}
		}
	}
	return n
}

// validateSkips fails when a swept mode can run at none of the values.
func (o *options) validateSkips() error {
	_, swept := o.plan()
	sp := o.sweepSpec
	for _, m := range swept {
		why := ""
		for _, v := range sp.values {
			if why = sp.skips(m, v); why == "" {
				break
			}
		}
		if why != "" {
			return fmt.Errorf("-sweep %s: %s can run at none of these values (%s)", o.sweep, m, why)
		}
	}
	return nil
}
