package middleware

import "strings"

// forwardedFor returns the "for" value of every element of RFC 7239
// Forwarded header lines, in order, unquoted. An element without a "for"
// parameter gives "", which holds no address.
func forwardedFor(lines []string) []string {
	var out []string
	for _, line := range lines {
		for _, elem := range splitOutsideQuotes(line, ',') {
			out = append(out, forParam(elem))
		}
	}
	return out
}

// forParam returns the unquoted value of the "for" pair of one element.
func forParam(elem string) string {
	for _, pair := range splitOutsideQuotes(elem, ';') {
		k, v, ok := strings.Cut(pair, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
			return unquote(strings.TrimSpace(v))
		}
	}
	return ""
}

// splitOutsideQuotes splits s at every sep that is not inside a
// quoted-string, honouring backslash escapes within quotes.
func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
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
	return append(parts, s[start:])
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
