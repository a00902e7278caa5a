package budget

// trip is the Calls Stats counted in one round trip: those planned
// together go to Redis together (a Tick's batches in one pipeline, see
// ExecAll; a decision's or a Reset's Call alone). calls is how many of
// them are still counted.
type trip struct{ calls int }

// count counts calls, planned to go to Redis in one round trip, in
// Stats: a call each, their items, and the round trip. None: nothing.
func (m *Machine) count(calls ...*Call) {
	if len(calls) == 0 {
		return
	}
	t := &trip{calls: len(calls)}
	for _, c := range calls {
		c.trip = t
		m.stats.Calls++
		m.stats.Items += uint64(len(c.Items))
	}
	m.stats.RoundTrips++
}

// Unsent takes Call c, which the Machine planned and the driver never
// sent (its caller's context had ended first), back out of Stats: its
// call and items, and its round trip once every Call planned with it
// (Tick's others) is taken back too. The Call's outcome still goes to
// Complete or Finish. A Call not counted (a Peek's) or already taken
// back is ignored; one Tick sends again is counted again. Stats read in
// between count the Call: Limiter takes a Call back before it lets go of
// the lock it planned it under, so its Stats never go down.
func (m *Machine) Unsent(c *Call) {
	t := c.trip
	if t == nil {
		return
	}
	c.trip = nil
	m.stats.Calls--
	m.stats.Items -= uint64(len(c.Items))
	if t.calls--; t.calls == 0 {
		m.stats.RoundTrips--
	}
}
