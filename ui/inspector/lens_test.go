package inspector

import (
	"slices"
	"testing"
)

// TestLensLayers: where not every layer fits, the first, the settle layer
// and the last are kept, in order, with as many rows as there are.
func TestLensLayers(t *testing.T) {
	if got := lensLayers(5, 3, 8); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("all fit: %v", got)
	}
	for _, tc := range []struct{ n, settle, rows int }{{22, 16, 8}, {22, 0, 3}, {22, 21, 2}, {40, 7, 9}, {5, 2, 4}} {
		got := lensLayers(tc.n, tc.settle, tc.rows)
		if len(got) != tc.rows || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("%+v: %v", tc, got)
		}
		if !slices.Contains(got, tc.settle) || !slices.Contains(got, tc.n-1) {
			t.Errorf("%+v: %v lacks the settle or the last layer", tc, got)
		}
		if tc.rows >= 3 && got[0] != 0 {
			t.Errorf("%+v: %v lacks the first layer", tc, got)
		}
	}
	if settleCell(3, 5) != "3" || settleCell(0, 22) != "▁" || settleCell(21, 22) != "█" {
		t.Errorf("cells %q %q %q", settleCell(3, 5), settleCell(0, 22), settleCell(21, 22))
	}
}
