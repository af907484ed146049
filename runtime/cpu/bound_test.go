package cpu

import (
	"testing"

	"vkchat/runtime/backend"
)

// TestDecodeBytesCountsTheCacheType: what a decode step reads of the KV
// cache is counted in the cache's type — a q8_0 cache 34 B a block of 32
// values where f16 takes 64 — so the bound the bench prints is the one of
// the cache the step reads.
func TestDecodeBytesCountsTheCacheType(t *testing.T) {
	m := loadShared(t, "synth-qwen3-F32.gguf") // 2 layers × 2 KV heads × 128
	read := map[backend.KVType]int64{}
	for _, kv := range []backend.KVType{backend.KVF16, backend.KVQ8_0} {
		b, err := newFor(m, backend.Options{ContextSize: 64, Threads: 1, KVType: kv})
		if err != nil {
			t.Fatal(err)
		}
		read[kv] = b.DecodeBytes(9)
		b.Close()
	}
	// 10 positions × 2 layers × (K + V) rows of 256 values
	const rows = 10 * 2 * 2
	if got, want := read[backend.KVF16]-read[backend.KVQ8_0], int64(rows*(256*2-8*34)); got != want {
		t.Errorf("f16 step reads %d B more than a q8_0 one, want %d", got, want)
	}
}
