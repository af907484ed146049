package simd

import (
	"sync"
	"sync/atomic"
	"time"
)

// BandwidthBytes is the buffer ReadBandwidth streams: several times any
// last-level cache, so the reads come from memory.
const BandwidthBytes = 128 << 20

var sink atomic.Uint64

// ReadBandwidth measures the machine's streaming read bandwidth in bytes
// per second with threads goroutines (each reading its own part of one
// buffer with the kernels' loads), best of passes: the bound a decode step,
// which reads every weight once, is judged against.
func ReadBandwidth(threads, passes int) float64 {
	threads = max(1, threads)
	buf := make([]byte, BandwidthBytes)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = byte(i >> 12) // touch every page before timing
	}
	part := len(buf) / threads &^ 127
	best := 0.0
	for p := 0; p < max(1, passes); p++ {
		var wg sync.WaitGroup
		start := time.Now()
		for t := 0; t < threads; t++ {
			wg.Add(1)
			go func(b []byte) {
				defer wg.Done()
				sink.Add(ReadSum(b))
			}(buf[t*part : (t+1)*part])
		}
		wg.Wait()
		best = max(best, float64(threads*part)/time.Since(start).Seconds())
	}
	return best
}
