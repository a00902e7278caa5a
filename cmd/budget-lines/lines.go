package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/edgelimit/edgelimit/sim/engine"
	"github.com/edgelimit/edgelimit/sim/report"
)

// ErrReport is wrapped by every error a line's report is refused with (not
// readable, not pop-sim's JSON, or without both a redis and a budget
// row); test with errors.Is.
var ErrReport = errors.New("bad pop-sim report")

// Line is one run's figures, pure Redis against budget on the same trace.
// A figure a mode did not measure is nil (JSON null; "-" in the table).
type Line struct {
	Name string `json:"line"`
	// Mode is the budget row's mode (budget, budget-nowait, budget-gossip,
	// ...): the candidate the line measured.
	Mode string `json:"mode"`
	// OverRedis and OverBudget are the worst over-admission (the exact
	// log's worst window ÷ the limit); OverDelta is budget's minus Redis'.
	OverRedis  float64 `json:"over_redis"`
	OverBudget float64 `json:"over_budget"`
	OverDelta  float64 `json:"over_delta"`
	// WronglyLimited* count identities never over their limit yet denied.
	WronglyLimitedRedis  int64 `json:"wrongly_limited_redis"`
	WronglyLimitedBudget int64 `json:"wrongly_limited_budget"`
	// SavedPct is budget's round trips saved against one per decision.
	SavedPct float64 `json:"rts_saved_pct"`
	// P99* are the added latency's p99 (ms).
	P99Redis  float64 `json:"p99_ms_redis"`
	P99Budget float64 `json:"p99_ms_budget"`
	// ScriptUs* are Redis' script time per decision (µs, INFO
	// commandstats); ScriptRatio budget's ÷ Redis'.
	ScriptUsRedis  *float64 `json:"script_us_per_decision_redis"`
	ScriptUsBudget *float64 `json:"script_us_per_decision_budget"`
	ScriptRatio    *float64 `json:"script_ratio"`
	// ItemsPerDecision is budget's Machines' items ÷ decisions.
	ItemsPerDecision *float64 `json:"items_per_decision"`
	// RedisBytes* are used_memory grown per identity at Redis; ViewBytes
	// budget's Machines' heap per identity of the run (every PoP's view
	// together), ViewEntryBytes per entry (one PoP's cost of an identity
	// it holds).
	RedisBytesRedis  *float64 `json:"redis_bytes_per_identity_redis"`
	RedisBytesBudget *float64 `json:"redis_bytes_per_identity_budget"`
	// RedisBytesRunBudget is budget's used_memory grown ÷ every identity
	// that made a request in the run (most have no Redis state: they
	// live on free credit).
	RedisBytesRunBudget *float64 `json:"redis_bytes_per_run_identity_budget"`
	ViewBytes           *float64 `json:"view_bytes_per_identity_budget"`
	ViewEntryBytes      *float64 `json:"view_bytes_per_entry_budget"`
	// Lost* are units admitted that Redis never counted (nil: the mode
	// does not measure it).
	LostRedis  *int64 `json:"lost_redis"`
	LostBudget *int64 `json:"lost_budget"`
	// Classes are the contested classes (the reference denied some of
	// their identities), in the report's order.
	Classes []Class `json:"classes"`
	// Errors are every class's decision error and wrongly limited
	// identities, pure Redis against budget, in the report's order.
	Errors []ClassError `json:"errors"`
}

// ClassError is one class's decision error (% of its decisions judged
// wrong against the exact log of what the mode admitted) and its
// identities wrongly limited (never over the limit, yet denied), pure
// Redis against budget.
type ClassError struct {
	Name                 string  `json:"class"`
	ErrorRedis           float64 `json:"error_pct_redis"`
	ErrorBudget          float64 `json:"error_pct_budget"`
	WronglyLimitedRedis  int64   `json:"wrongly_limited_redis"`
	WronglyLimitedBudget int64   `json:"wrongly_limited_budget"`
}

// Class is one contested class's service, pure Redis against budget:
// units admitted, and quota served (÷ the reference's units × 100).
type Class struct {
	Name          string  `json:"class"`
	AllowedRedis  int64   `json:"allowed_redis"`
	AllowedBudget int64   `json:"allowed_budget"`
	ServedRedis   float64 `json:"served_pct_redis"`
	ServedBudget  float64 `json:"served_pct_budget"`
	// Ratio is AllowedBudget ÷ AllowedRedis (0 when Redis admitted none).
	Ratio float64 `json:"ratio"`
}

// readLine reads DIR/NAME.json, a pop-sim -json report with a redis and a
// budget row (the first row of a budget mode: budget, budget-nowait, or
// budget-gossip for a line that runs gossip), into its Line.
func readLine(dir, name string) (Line, error) {
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		return Line{}, fmt.Errorf("%w: line %s: %w", ErrReport, name, err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return Line{}, fmt.Errorf("%w: line %s: %w", ErrReport, name, err)
	}
	var rd, bu *engine.Result
	for i := range rep.Results {
		switch rep.Results[i].Mode {
		case "redis":
			rd = &rep.Results[i]
		default:
			if bu == nil && strings.HasPrefix(rep.Results[i].Mode, "budget") {
				bu = &rep.Results[i]
			}
		}
	}
	if rd == nil || bu == nil {
		return Line{}, fmt.Errorf("%w: line %s: want a redis and a budget row (-mode redis,budget, redis,budget-gossip, redis,budget-nowait ...)", ErrReport, name)
	}
	return lineOf(name, rd, bu), nil
}

// lineOf computes a line's figures from its two rows.
func lineOf(name string, rd, bu *engine.Result) Line {
	l := Line{Name: name, Mode: bu.Mode, OverRedis: rd.MaxOveradmission, OverBudget: bu.MaxOveradmission,
		OverDelta:           bu.MaxOveradmission - rd.MaxOveradmission,
		WronglyLimitedRedis: rd.WronglyLimited, WronglyLimitedBudget: bu.WronglyLimited,
		SavedPct: bu.RoundTripsSavedPct, P99Redis: rd.AddedLatencyP99Ms, P99Budget: bu.AddedLatencyP99Ms,
		ScriptUsRedis: scriptUs(rd), ScriptUsBudget: scriptUs(bu),
		RedisBytesRedis: redisBytes(rd), RedisBytesBudget: redisBytes(bu),
		LostRedis: lost(rd), LostBudget: lost(bu)}
	if l.ScriptUsRedis != nil && l.ScriptUsBudget != nil && *l.ScriptUsRedis > 0 {
		l.ScriptRatio = ptr(*l.ScriptUsBudget / *l.ScriptUsRedis)
	}
	if bu.Budget != nil {
		l.ItemsPerDecision = ptr(bu.Budget.ItemsPerDecision)
	}
	if m := bu.Memory; m != nil && m.View != nil {
		l.ViewBytes, l.ViewEntryBytes = ptr(m.View.BytesPerIdentity), ptr(m.View.BytesPerEntry)
		if m.Redis != nil && m.View.Identities > 0 {
			l.RedisBytesRunBudget = ptr(float64(m.Redis.UsedBytes) / float64(m.View.Identities))
		}
	}
	for _, rc := range rd.Classes {
		if rc.Contested == 0 {
			continue
		}
		c := Class{Name: rc.Class, AllowedRedis: rc.Allowed, ServedRedis: rc.QuotaServedPct}
		for _, bc := range bu.Classes {
			if bc.Class == rc.Class {
				c.AllowedBudget, c.ServedBudget = bc.Allowed, bc.QuotaServedPct
			}
		}
		if c.AllowedRedis > 0 {
			c.Ratio = float64(c.AllowedBudget) / float64(c.AllowedRedis)
		}
		l.Classes = append(l.Classes, c)
	}
	for _, rc := range rd.Classes {
		ce := ClassError{Name: rc.Class, ErrorRedis: rc.DecisionErrorPct, WronglyLimitedRedis: rc.WronglyLimited}
		for _, bc := range bu.Classes {
			if bc.Class == rc.Class {
				ce.ErrorBudget, ce.WronglyLimitedBudget = bc.DecisionErrorPct, bc.WronglyLimited
			}
		}
		l.Errors = append(l.Errors, ce)
	}
	return l
}

func ptr[T any](v T) *T { return &v }

// scriptUs is r's script time per decision (µs); nil when not measured.
func scriptUs(r *engine.Result) *float64 {
	if r.RedisLoad == nil || r.Decisions == 0 {
		return nil
	}
	return ptr(r.RedisLoad.ScriptSeconds * 1e6 / float64(r.Decisions))
}

// redisBytes is r's used_memory grown per identity; nil when not measured.
func redisBytes(r *engine.Result) *float64 {
	if r.Memory == nil || r.Memory.Redis == nil {
		return nil
	}
	return ptr(r.Memory.Redis.BytesPerIdentity)
}

// lost is r's lost units; nil when the mode does not measure them (-1).
func lost(r *engine.Result) *int64 {
	if r.LostHits < 0 {
		return nil
	}
	return ptr(r.LostHits)
}
