package gossip

import "time"

// Entry is one sender's cumulative count of one identity in one window.
// The zero value is invalid (Key empty, Count 0).
type Entry struct {
	Key    string // the identity, 1..core.MaxKeyLen bytes
	Window int64  // window index: unix milliseconds / window length
	Count  int64  // units counted in that window (the budget limiter: Redis' count C), 1..MaxCount
}

// Message is one gossip batch. The zero value is invalid (no PoP).
type Message struct {
	PoP          string    // sender's counter id (PoP and incarnation), 1..MaxSenderLen bytes
	SentAt       time.Time // sender's clock at send, millisecond resolution
	WindowMillis int64     // window length the counts refer to, ≥ 1
	Entries      []Entry
}
