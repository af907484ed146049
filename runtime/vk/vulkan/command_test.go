package vulkan

import "testing"

func TestOverlaps(t *testing.T) {
	b, c := &Buffer{Size: 1024}, &Buffer{Size: 1024}
	span := func(w bool, lo, hi uint64) Arg { return Arg{B: b, Write: w, Span: [2]uint64{lo, hi}} }
	for _, tc := range []struct {
		name string
		a, b Arg
		want bool
	}{
		{"two reads", R(b), R(b), false},
		{"read and write", R(b), W(b), true},
		{"other buffer", W(b), W(c), false},
		{"disjoint ranges", Arg{B: b, Off: 0, Size: 256, Write: true}, Arg{B: b, Off: 256, Size: 256, Write: true}, false},
		{"disjoint spans of one binding", span(true, 0, 64), span(true, 64, 128), false},
		{"overlapping spans", span(true, 0, 65), span(true, 64, 128), true},
		{"a span against the whole buffer", span(true, 512, 520), R(b), true},
		{"a span outside a range", span(true, 512, 520), Arg{B: b, Size: 256}, false},
	} {
		if got := overlaps(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: overlaps %v, want %v", tc.name, got, tc.want)
		}
	}
}
