package sample

import (
	"math"
	"testing"
)

func TestExpNonPos(t *testing.T) {
	worst := 0.0
	for i := 0; i <= 2_000_000; i++ {
		x := -708 * float64(i) / 2_000_000
		got, want := expNonPos(x), math.Exp(x)
		rel := math.Abs(got-want) / want
		worst = math.Max(worst, rel)
	}
	t.Logf("worst relative error %g", worst)
	if worst > 1e-10 {
		t.Fatalf("worst relative error %g, want ≤ 1e-10", worst)
	}
	for _, tc := range []struct{ x, want float64 }{
		{0, 1},
		{math.Copysign(0, -1), 1},
		{-709, 0},
		{-1e300, 0},
		{math.Inf(-1), 0},
	} {
		if got := expNonPos(tc.x); got != tc.want {
			t.Errorf("expNonPos(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}
