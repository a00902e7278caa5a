package metrics

import (
	"reflect"
	"strings"
	"unicode"
)

// Fields turns a struct of counters, such as a budget limiter's Stats(), into
// the map AddStats wants: one entry per exported field of integer or float
// kind, named in snake case (GossipSent → "gossip_sent"). Other fields are
// skipped; v may also be a pointer to a struct. Anything else, or a nil
// pointer, gives an empty map.
//
//	c.AddStats("pop-1", func() map[string]float64 { return metrics.Fields(node.Stats()) })
func Fields(v any) map[string]float64 {
	out := map[string]float64{}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return out
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return out
	}
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Type().Field(i)
		if x, ok := number(rv.Field(i)); ok && f.IsExported() {
			out[snake(f.Name)] = x
		}
	}
	return out
}

func number(v reflect.Value) (float64, bool) {
	switch {
	case v.CanInt():
		return float64(v.Int()), true
	case v.CanUint():
		return float64(v.Uint()), true
	case v.CanFloat():
		return v.Float(), true
	}
	return 0, false
}

// snake writes a Go name in snake case: "RedisRoundTrips" →
// "redis_round_trips", "NATSErrors" → "nats_errors".
func snake(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) ||
			(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
