package cpu

import (
	"context"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/models"
	"vkchat/runtime/backend"
	"vkchat/runtime/gguf"
)

// BenchmarkDecode measures single-token decode over the first 256
// positions of stories260K (b.N tokens, the cache wrapping as needed).
func BenchmarkDecode(b *testing.B) {
	f, err := gguf.Open(testenv.Model(b, "stories260K.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m, err := models.Load(f)
	if err != nil {
		b.Fatal(err)
	}
	be, err := New(m, backend.Options{ContextSize: 256})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := be.Forward(ctx, []int32{int32(i % m.Vocab)}, i%256, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}
