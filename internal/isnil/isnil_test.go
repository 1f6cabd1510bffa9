package isnil

import "testing"

type layer struct{}

func (*layer) Name() string { return "" }

func TestIsNil(t *testing.T) {
	var typed *layer
	var named interface{ Name() string } = typed
	var f func()
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{nil, true}, {typed, true}, {named, true}, {f, true}, {[]int(nil), true}, {map[int]int(nil), true},
		{&layer{}, false}, {0, false}, {"", false}, {func() {}, false}, {[]int{}, false},
	} {
		if got := IsNil(tc.v); got != tc.want {
			t.Errorf("IsNil(%#v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
