package cpu

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMemAvailableFrom(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		want       int64
	}{
		{"present", "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   16384 kB\n", 16384 << 10},
		{"absent (old kernels)", "MemTotal: 24000000 kB\nMemFree: 100 kB\n", -1},
		{"garbage", "MemAvailable: lots kB\n", -1},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := memAvailableFrom(p); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if got := memAvailableFrom(filepath.Join(dir, "missing")); got != -1 {
		t.Errorf("missing file: %d", got)
	}
}
