package inspector

import "testing"

func TestSurprisalLevel(t *testing.T) {
	cases := []struct {
		bits float64
		want int
	}{{0, 4}, {0.99, 4}, {1, 3}, {2.5, 2}, {4, 1}, {7.9, 1}, {8, 0}, {20, 0}}
	for _, tc := range cases {
		if got := SurprisalLevel(tc.bits); got != tc.want {
			t.Errorf("SurprisalLevel(%v) = %d, want %d", tc.bits, got, tc.want)
		}
	}
}
