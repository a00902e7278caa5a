package traffic

// classNames are the classes' names in a written trace, by class number.
var classNames = [...]string{
	calm: "calm", attackers: "attackers", spreadAttackers: "spread-attackers",
	pinnedAttackers: "pinned-attackers", near: "near", pinnedNear: "pinned-near",
	bursts: "bursts", crowd: "crowd",
}

// ClassNames lists the classes a generated trace's Trace.ClassOf indexes.
func ClassNames() []string { return classNames[:] }

// mark records that identities [first, first+n) are of class k.
func (g *gen) mark(first, n int, k class) {
	for id := first; id < first+n; id++ {
		g.classOf[id] = uint8(k)
	}
}

// classes are the classes a trace file names: index 0 is "" (none), and
// each identity's class is the one of its first request.
type classes struct {
	names []string
	index map[string]uint8
	of    []uint8 // by identity
}

func newClasses() classes {
	return classes{names: []string{""}, index: map[string]uint8{"": 0}}
}

// note records the class of identity id (the first class it is given), and
// says what is wrong if it contradicts an earlier one.
func (c *classes) note(id int32, name []byte, has bool) string {
	k, ok := c.index[string(name)]
	if !ok {
		if len(c.names) > 255 {
			return "more than 255 classes"
		}
		k = uint8(len(c.names))
		c.names = append(c.names, string(name))
		c.index[string(name)] = k
	}
	for len(c.of) <= int(id) {
		c.of = append(c.of, 0)
	}
	switch {
	case c.of[id] == 0:
		c.of[id] = k
	case has && len(name) > 0 && c.of[id] != k:
		return "class " + string(name) + ", but " + c.names[c.of[id]] + " before"
	}
	return ""
}

// result is the trace's Classes and ClassOf for identities identities: nil
// when no request had one.
func (c *classes) result(identities int) ([]string, []uint8) {
	if len(c.names) == 1 {
		return nil, nil
	}
	for len(c.of) < identities {
		c.of = append(c.of, 0)
	}
	return c.names, c.of
}
