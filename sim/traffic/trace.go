package traffic

import "time"

// Windows is how many windows of the limit every generated trace lasts.
const Windows = 6

// Request is one arrival: identity ID asks PoP for N units At after the
// start of the trace.
type Request struct {
	At  time.Duration
	ID  int32
	PoP int16
	N   int16
}

// Trace is a scenario's requests sorted by arrival time (ties keep their
// generation order), with the sizes it was generated for, or a recorded
// trace read by ReadTrace. A generated trace names each identity's class.
type Trace struct {
	Config   Config
	Duration time.Duration
	Requests []Request
	Classes  []string // class names, or nil for a trace without classes
	ClassOf  []uint8  // by identity: its index in Classes (nil with Classes)
	// Seeded says Config.Seed is the seed of the run that made the trace:
	// set by Generate, and by ReadTrace when the file records one (its
	// header's seed, which WriteTrace writes for a seeded trace).
	Seeded bool
}

// sortRequests orders rs by arrival, stably, so equal times keep the order
// the generator produced them in. A stable sort's result is unique, so any
// stable algorithm gives the same trace: a radix sort (radixSort), which at
// 10,000,000 requests takes a fraction of a second where
// slices.SortStableFunc took seconds.
func sortRequests(rs []Request) { radixSort(rs) }
