package chat

import (
	"slices"
	"testing"
)

func TestMarkerAvoidsInputs(t *testing.T) {
	msgs := []Message{{RoleUser, "vkc00000000m and vkc00000001m"}, {"vkc00000002m", "x"}}
	mk := newMarker("template mentions vkc00000003m", "", "", msgs)
	if mk.prefix != "vkc00000004m" {
		t.Fatalf("prefix %q, want the first one no input contains", mk.prefix)
	}
}

func TestMarkerSplit(t *testing.T) {
	mk := marker{prefix: "P"}
	cases := []struct {
		shape string
		n     int
		lits  []string
		refs  []int
		ok    bool
	}{
		{"a P0e b P1e c", 2, []string{"a ", " b ", " c"}, []int{0, 1}, true},
		{"P1eP0eP1e", 2, []string{"", "", "", ""}, []int{1, 0, 1}, true},
		{"no holes", 3, []string{"no holes"}, nil, true},
		{"P12e", 13, []string{"", ""}, []int{12}, true},
		{"P1", 2, nil, nil, false},            // cut after the digits
		{"P1x", 2, nil, nil, false},           // terminator altered
		{"Pe", 2, nil, nil, false},            // digits lost
		{"P5e", 2, nil, nil, false},           // no such message
		{"P99999999999e", 2, nil, nil, false}, // would overflow
	}
	for _, tc := range cases {
		lits, refs, ok := mk.split(tc.shape, tc.n)
		if ok != tc.ok || !slices.Equal(lits, tc.lits) || !slices.Equal(refs, tc.refs) {
			t.Errorf("split(%q) = %q %v %v, want %q %v %v", tc.shape, lits, refs, ok, tc.lits, tc.refs, tc.ok)
		}
	}
}
