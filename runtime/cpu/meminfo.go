package cpu

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// MemAvailable is the memory the kernel says can be allocated without
// swapping (/proc/meminfo's MemAvailable: free memory plus the page cache
// it can reclaim), or -1 where it does not say.
func MemAvailable() int64 { return memAvailableFrom("/proc/meminfo") }

func memAvailableFrom(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb < 0 {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}
