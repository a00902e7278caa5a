package clientkind

import "reflect"

// Nil reports whether client c is nil or a nil pointer in the interface (a
// *redis.Client variable left unset), which would panic on first use.
func Nil(c any) bool {
	if c == nil {
		return true
	}
	v := reflect.ValueOf(c)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
