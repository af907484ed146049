package tokenizer

import (
	"slices"
	"sync"
	"testing"
)

// TestConcurrentEncode: a Tokenizer is shared by every request, so Encode
// must be safe from many goroutines (run with -race to check).
func TestConcurrentEncode(t *testing.T) {
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			tk := load(t, name)
			want := make([][]int32, len(roundTripTexts))
			for i, s := range roundTripTexts {
				want[i] = tk.Encode(s, true, true)
			}
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i, s := range roundTripTexts {
						if got := tk.Encode(s, true, true); !slices.Equal(got, want[i]) {
							t.Errorf("%s: concurrent Encode(%q) differs", name, s)
						}
					}
				}()
			}
			wg.Wait()
		})
	}
	if _, err := FromGGUF(nil); err == nil {
		t.Error("FromGGUF(nil) succeeded")
	}
}
