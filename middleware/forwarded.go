package middleware

import "strings"

// forwardedFor returns the "for" value of every element of RFC 7239
// Forwarded header lines, in order, unquoted. An element without a "for"
// parameter gives "", which holds no address.
//
// A line whose last quoted-string never closes is split at every comma,
// quotes or not. Only a client can have left a quote open: a proxy appends
// whole elements, their quotes paired, after a comma. Read with quotes
// honoured to the end of the line, the client's open quote would swallow
// the elements the proxies appended to it, and a "for" the client wrote
// before that quote (for=192.0.2.1;x=") would pass for the last proxy's,
// letting the client choose its key; split at every comma, the proxies'
// elements (addresses and tokens, which hold no comma) stand whole.
func forwardedFor(lines []string) []string {
	var out []string
	for _, line := range lines {
		elems, open := splitOutsideQuotes(line, ',')
		if open {
			elems = strings.Split(line, ",")
		}
		for _, elem := range elems {
			out = append(out, forParam(elem))
		}
	}
	return out
}

// forParam returns the unquoted value of the "for" pair of one element.
func forParam(elem string) string {
	pairs, _ := splitOutsideQuotes(elem, ';')
	for _, pair := range pairs {
		k, v, ok := strings.Cut(pair, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
			return unquote(strings.TrimSpace(v))
		}
	}
	return ""
}

// splitOutsideQuotes splits s at every sep that is not inside a
// quoted-string, honouring backslash escapes within quotes; open reports
// that s ends inside a quoted-string.
func splitOutsideQuotes(s string, sep byte) (parts []string, open bool) {
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:]), quoted
}

// unquote removes the quotes and escapes of a quoted-string; a token is
// returned as it is.
func unquote(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	var b strings.Builder
	for i := 1; i < len(v)-1; i++ {
		if v[i] == '\\' && i+1 < len(v)-1 {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
