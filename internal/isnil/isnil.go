// Package isnil tells a nil interface value from a usable one, including
// the typed nils (a nil *T stored in an interface) that a plain == nil
// misses.
package isnil

import "reflect"

// IsNil reports whether v is nil, or a nil pointer, map, slice, function,
// channel or interface held in an interface.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}
