package traffic

import "unicode/utf8"

// fastJSON splits a plain request line, {"t_ms":1.5,"identity":"a",...},
// without encoding/json: string values without escapes, other values as
// their raw token. ok is false for anything else (escapes, an unknown or
// repeated key, a value of the wrong kind, bad syntax), which the caller
// then decodes with encoding/json for the exact error.
func fastJSON(line []byte) (f field, ok bool) {
	p := jsonScan{b: line}
	if !p.byte('{') {
		return f, false
	}
	var seen [5]bool
	for first := true; ; first = false {
		if p.byte('}') {
			return f, !first && p.end() && seen[0] && seen[1] && seen[2] && seen[3]
		}
		if !first && !p.byte(',') {
			return f, false
		}
		key, ok := p.str()
		if !ok || !p.byte(':') {
			return f, false
		}
		k := jsonKey(key)
		if k < 0 || seen[k] {
			return f, false
		}
		seen[k] = true
		if !p.value(&f, k) {
			return f, false
		}
	}
}

// jsonKey is the index of a request field's key, or -1.
func jsonKey(key []byte) int {
	switch string(key) {
	case "t_ms":
		return 0
	case "identity":
		return 1
	case "pop":
		return 2
	case "weight":
		return 3
	case "class":
		return 4
	}
	return -1
}

// jsonScan walks a line.
type jsonScan struct {
	b []byte
	i int
}

func (p *jsonScan) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
		p.i++
	}
}

// byte consumes c after spaces, if it is next.
func (p *jsonScan) byte(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *jsonScan) end() bool {
	p.space()
	return p.i == len(p.b)
}

// str reads a string of valid UTF-8 without escapes or control
// characters.
func (p *jsonScan) str() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start, ascii := p.i, true
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			s := p.b[start : p.i-1]
			return s, ascii || utf8.Valid(s)
		case c >= utf8.RuneSelf:
			ascii = false
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// token reads a number: the characters a JSON number may hold.
func (p *jsonScan) token() ([]byte, bool) {
	p.space()
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		p.i++
	}
	return p.b[start:p.i], isJSONNumber(p.b[start:p.i])
}

// isJSONNumber checks JSON's number grammar:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// value reads field k's value: a string for identity and class, a number
// for t_ms and weight, either for pop.
func (p *jsonScan) value(f *field, k int) bool {
	p.space()
	quoted := p.i < len(p.b) && p.b[p.i] == '"'
	var v []byte
	var ok bool
	switch {
	case quoted && (k == 1 || k == 2 || k == 4):
		v, ok = p.str()
	case !quoted && (k == 0 || k == 2 || k == 3):
		v, ok = p.token()
	}
	switch k {
	case 0:
		f.t = v
	case 1:
		f.identity = v
	case 2:
		f.pop = v
	case 3:
		f.weight = v
	case 4:
		f.class, f.hasClass = v, true
	}
	return ok
}
