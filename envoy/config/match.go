package config

import "strings"

// Entry is one key/value pair of a request's descriptor.
type Entry struct{ Key, Value string }

// Match returns the rule that limits a descriptor of entries (see the package
// doc), or nil when none does: no rule matches, or the rule reached has no
// rate_limit. A nil or empty Domain matches nothing.
func (d *Domain) Match(entries []Entry) *Rule {
	if d == nil || d.top == nil {
		return nil
	}
	lv := d.top
	for i, e := range entries {
		r := lv.find(e)
		if r == nil {
			return nil
		}
		if i == len(entries)-1 {
			if r.RateLimit == nil {
				return nil
			}
			return r
		}
		lv = r.children
	}
	return nil
}

// find picks the rule for one entry: exact value, then the longest wildcard
// prefix, then key only.
func (lv *level) find(e Entry) *Rule {
	if lv == nil {
		return nil
	}
	if r := lv.exact[e]; r != nil {
		return r
	}
	for _, w := range lv.wildcards {
		if w.Key == e.Key && strings.HasPrefix(e.Value, w.Value[:len(w.Value)-1]) {
			return w
		}
	}
	return lv.keyOnly[e.Key]
}
