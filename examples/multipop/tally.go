package main

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// counts are one window's requests of one class (attacker or calm).
type counts struct {
	sent, admitted, denied, other int // other: no response, or a status neither 200 nor 429
}

func (c *counts) add(status int) {
	c.sent++
	switch status {
	case http.StatusOK:
		c.admitted++
	case http.StatusTooManyRequests:
		c.denied++
	default:
		c.other++
	}
}

// tally counts outcomes by the limiter's window (the Unix time in ms
// divided by the window, as core numbers windows) of their send time.
type tally struct {
	window     time.Duration
	start, end time.Time
	mu         sync.Mutex
	attacker   map[int64]*counts
	calm       map[int64]*counts
	limited    map[int64]bool // windows with an attacker 429 decided in their last tenth (see limitedAtEnd)
}

func newTally(window time.Duration) *tally {
	return &tally{window: window, attacker: map[int64]*counts{}, calm: map[int64]*counts{}, limited: map[int64]bool{}}
}

func (t *tally) index(at time.Time) int64 { return at.UnixMilli() / t.window.Milliseconds() }

func (t *tally) add(attacker bool, o outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.calm
	if attacker {
		m = t.attacker
	}
	i := t.index(o.sent)
	if m[i] == nil {
		m[i] = &counts{}
	}
	m[i].add(o.status)
	if attacker && o.status == http.StatusTooManyRequests && t.inLastTenth(i, o.sent) && t.inLastTenth(i, o.answered) {
		t.limited[i] = true
	}
}

// inLastTenth reports whether at lies in the last tenth of window i.
func (t *tally) inLastTenth(i int64, at time.Time) bool {
	w := t.window.Milliseconds()
	ms := at.UnixMilli()
	return t.index(at) == i && ms-i*w >= w-w/10
}

// limitedAtEnd reports whether the PoPs refused the attacker (429) in the
// last tenth of window i, the request sent and answered inside it, so
// decided there: the limit was reached by then on the PoPs' own counts,
// not merely short of demand. For the sliding window counter a refusal
// at a fraction f ≥ 0.9 of a window whose previous window admitted P
// means the window had admitted at least limit − 1 − P×(1−f) ≥
// 0.875×limit − 1 with P ≤ 1.25×limit. A window without such a refusal
// (a load generator starved of CPU that sent nothing late in it, or PoPs
// that answered only after it ended) says nothing about how much the
// limit admits.
func (t *tally) limitedAtEnd(i int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limited[i]
}

// full reports whether window i lies wholly inside the load.
func (t *tally) full(i int64) bool { return i > t.index(t.start) && i < t.index(t.end) }

// windows are the indexes seen, in order.
func (t *tally) windows() []int64 {
	var ws []int64
	for i := range t.attacker {
		ws = append(ws, i)
	}
	for i := range t.calm {
		if t.attacker[i] == nil {
			ws = append(ws, i)
		}
	}
	slices.Sort(ws)
	return ws
}

// worst is the most attacker requests admitted in one window, partial
// ones included (the first is where all PoPs start with empty views).
func (t *tally) worst() int {
	w := 0
	for _, c := range t.attacker {
		w = max(w, c.admitted)
	}
	return w
}

// calmTotal sums the calm identities' counts over every window.
func (t *tally) calmTotal() counts {
	var s counts
	for _, c := range t.calm {
		s.sent, s.admitted, s.denied, s.other = s.sent+c.sent, s.admitted+c.admitted, s.denied+c.denied, s.other+c.other
	}
	return s
}

func (t *tally) report(out io.Writer, o loadOptions) {
	fmt.Fprintf(out, "attacker at %.0f req/s spread over %d PoPs, %d calm clients 1 per %s; limit %d per %s\n",
		o.attackRate, len(o.targets), o.calm, o.calmEvery, o.limit, o.window)
	fmt.Fprintf(out, "%-9s %-8s %13s %9s %6s %10s %13s\n", "window", "", "attacker sent", "admitted", "limit", "calm sent", "calm refused")
	for _, i := range t.windows() {
		a, c := t.attacker[i], t.calm[i]
		if a == nil {
			a = &counts{}
		}
		if c == nil {
			c = &counts{}
		}
		kind := "full"
		if !t.full(i) {
			kind = "partial"
		}
		start := time.UnixMilli(i * t.window.Milliseconds()).Format("15:04:05")
		fmt.Fprintf(out, "%-9s %-8s %13d %9d %6d %10d %13d\n", start, kind, a.sent, a.admitted, o.limit, c.sent, c.denied+c.other)
	}
	calm := t.calmTotal()
	fmt.Fprintf(out, "worst window: attacker admitted %d of a limit of %d (%.2f×); calm clients: %d of %d refused\n",
		t.worst(), o.limit, float64(t.worst())/float64(o.limit), calm.denied+calm.other, calm.sent)
}

// check fails when a window admitted more of the attacker than tolerance ×
// limit, when no window was full, or when a calm request was
// refused or got no answer.
func (t *tally) check(o loadOptions) error {
	full := 0
	for i := range t.attacker {
		if t.full(i) {
			full++
		}
	}
	calm := t.calmTotal()
	switch {
	case full == 0:
		return fmt.Errorf("no full window in %s of load; run longer than two windows", o.duration)
	case float64(t.worst()) > o.tolerance*float64(o.limit):
		return fmt.Errorf("a window admitted %d of the attacker, over %.2f × %d", t.worst(), o.tolerance, o.limit)
	case calm.denied+calm.other > 0 || calm.sent == 0:
		return fmt.Errorf("calm clients: %d of %d refused or unanswered", calm.denied+calm.other, calm.sent)
	}
	return nil
}
