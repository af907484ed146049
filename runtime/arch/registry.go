package arch

import (
	"fmt"
	"sort"
	"strings"
)

// Supported lists the architecture names that Load accepts.
func Supported() []string {
	names := make([]string, 0, len(archs))
	for n := range archs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookupArch(path, name string) (Arch, error) {
	a, ok := archs[name]
	if !ok {
		return Arch{}, fmt.Errorf("%s: architecture %q is not supported (supported: %s)", path, name, strings.Join(Supported(), ", "))
	}
	return a, nil
}
