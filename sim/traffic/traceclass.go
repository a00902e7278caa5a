package traffic

import (
	"fmt"
	"strings"
)

// classNames are the classes' names in a written trace, by class number.
var classNames = [...]string{
	calm: "calm", attackers: "attackers", spreadAttackers: "spread-attackers",
	pinnedAttackers: "pinned-attackers", near: "near", pinnedNear: "pinned-near",
	bursts: "bursts", crowd: "crowd", nearSpread: "near-spread", warm: "warm",
}

// ClassNames lists the classes a generated trace's Trace.ClassOf indexes.
func ClassNames() []string { return classNames[:] }

// mark records that identities [first, first+n) are of class k.
func (g *gen) mark(first, n int, k class) {
	for id := first; id < first+n; id++ {
		g.classOf[id] = uint8(k)
	}
}

// unclassified is the class of a trace file's identities given none, in a
// file that gives some a class.
const unclassified = "unclassified"

// classes are the classes a trace file names, in the header's order (its
// classes key) then in order of first appearance; each identity's class is
// the first one it is given.
type classes struct {
	names    []string
	index    map[string]int
	declared bool
	of       []uint8 // by identity: 1 + its index in names; 0 for none yet
}

func newClasses() classes { return classes{index: map[string]int{}} }

// declare reads the header's classes: comma-separated names.
func (c *classes) declare(list string) string {
	if c.declared {
		return "classes declared twice"
	}
	c.declared = true
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if _, dup := c.index[name]; name == "" || dup {
			return fmt.Sprintf("classes: name %q empty or twice", name)
		}
		if msg := c.add(name); msg != "" {
			return msg
		}
	}
	return ""
}

// add appends a class name.
func (c *classes) add(name string) string {
	if len(c.names) >= 255 {
		return "more than 255 classes"
	}
	c.index[name] = len(c.names)
	c.names = append(c.names, name)
	return ""
}

// note records the class of identity id (the first class it is given), and
// says what is wrong if it is unknown or contradicts an earlier one.
func (c *classes) note(id int32, name []byte) string {
	if len(name) == 0 {
		return ""
	}
	k, ok := c.index[string(name)]
	if !ok {
		if c.declared {
			return fmt.Sprintf("class %q is not among the header's classes", clip(string(name)))
		}
		if msg := c.add(string(name)); msg != "" {
			return msg
		}
		k = len(c.names) - 1
	}
	for len(c.of) <= int(id) {
		c.of = append(c.of, 0)
	}
	switch prev := c.of[id]; {
	case prev == 0:
		c.of[id] = uint8(k + 1)
	case int(prev) != k+1:
		return fmt.Sprintf("class %s, but %s before", name, c.names[prev-1])
	}
	return ""
}

// result is the trace's Classes and ClassOf for identities identities, the
// ones given no class in unclassified: nil when no request had a class and
// the header declared none.
func (c *classes) result(identities int) ([]string, []uint8) {
	if len(c.names) == 0 {
		return nil, nil
	}
	for len(c.of) < identities {
		c.of = append(c.of, 0)
	}
	none := -1
	for i, k := range c.of {
		if k == 0 {
			if none < 0 {
				none = len(c.names)
				c.names = append(c.names, unclassified)
			}
			k = uint8(none + 1)
		}
		c.of[i] = k - 1
	}
	return c.names, c.of
}
