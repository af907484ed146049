package cpu

import (
	"context"
	"math"
	"testing"

	"vkchat/runtime/backend"
)

// TestTimeOps: with timing on, each plan op is counted once per pass it
// ran in, under its kind (a product under what it writes; the input's
// and head's ops apart) with a positive time; TimeOps(true) starts from
// zero, TimeOps(false) stops counting; and the logits are the same bits
// timed or not.
func TestTimeOps(t *testing.T) {
	m := loadShared(t, "stories260K.gguf")
	b, err := newFor(m, backend.Options{ContextSize: 64, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	tokens := []int32{1, 20, 300, 40, 5}
	plain, err := b.Forward(ctx, tokens, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	plain = append([]float32(nil), plain...)
	b.TimeOps(true)
	timed, err := b.Forward(ctx, tokens, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range plain {
		if math.Float32bits(plain[i]) != math.Float32bits(timed[i]) {
			t.Fatalf("logit %d: %g timed, %g not", i, timed[i], plain[i])
		}
	}
	if _, err := b.Forward(ctx, tokens[:1], len(tokens), false); err != nil {
		t.Fatal(err)
	}
	got := map[string]OpTime{}
	for _, o := range b.OpTimes() {
		if !(o.Time > 0) {
			t.Errorf("%s: %v", o.Op, o.Time)
		}
		got[o.Op] = o
	}
	layers := len(m.Layers)
	for op, calls := range map[string]int{
		"input: embed": 2, "attention": 2 * layers, "products → q,k,v": 2 * layers, "products → gate,up": 2 * layers,
		"glu": 2 * layers, "head: products → logits": 2, "head: norm": 2,
	} {
		if got[op].Calls != calls {
			t.Errorf("%s: %d calls, want %d (ops %v)", op, got[op].Calls, calls, got)
		}
	}
	b.TimeOps(true)
	if ops := b.OpTimes(); len(ops) != 0 {
		t.Errorf("TimeOps(true) kept %v", ops)
	}
	b.TimeOps(false)
	if _, err := b.Forward(ctx, tokens[:1], 0, false); err != nil {
		t.Fatal(err)
	}
	if ops := b.OpTimes(); ops != nil {
		t.Errorf("counted with timing off: %v", ops)
	}
}
