package config

import "strings"

// Entry is one key/value pair of a request's descriptor.
type Entry struct{ Key, Value string }

// Match returns the rule that limits a descriptor of entries (see the package
// doc), or nil when none does: no rule matches, or the rule reached has no
// rate_limit. A nil or empty Domain matches nothing.
func (d *Domain) Match(entries []Entry) *Rule {
	r, _ := d.MatchKey(entries)
	return r
}

// MatchKey is Match, also returning the entries that name the descriptor's
// counter: the request's own, except that an entry matched by a wildcard
// rule with share_threshold takes the rule's pattern as its value, so every
// value under that wildcard shares one counter. Both are nil when no rule
// limits the descriptor.
func (d *Domain) MatchKey(entries []Entry) (*Rule, []Entry) {
	if d == nil || d.top == nil {
		return nil, nil
	}
	lv := d.top
	var key []Entry
	for i, e := range entries {
		r := lv.find(e)
		if r == nil {
			return nil, nil
		}
		if r.ShareThreshold {
			if key == nil {
				key = append([]Entry(nil), entries...)
			}
			key[i].Value = r.Value
		}
		if i == len(entries)-1 {
			if r.RateLimit == nil {
				return nil, nil
			}
			if key == nil {
				key = entries
			}
			return r, key
		}
		lv = r.children
	}
	return nil, nil
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
