package models

import (
	"fmt"
	"sort"
	"strings"
)

// arch is what differs between the supported architectures. Everything else
// (GQA attention, RMSNorm, SwiGLU) is shared by the llama family.
type arch struct {
	name string
	// neox selects GPT-NeoX rotary pairing.
	neox bool
	// qkvBias: Q, K and V projections carry a bias vector.
	qkvBias bool
}

var archs = map[string]arch{}

func registerArch(a arch) { archs[a.name] = a }

// Supported lists the architecture names that Load accepts.
func Supported() []string {
	names := make([]string, 0, len(archs))
	for n := range archs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookupArch(path, name string) (arch, error) {
	a, ok := archs[name]
	if !ok {
		return arch{}, fmt.Errorf("%s: architecture %q is not supported (supported: %s)", path, name, strings.Join(Supported(), ", "))
	}
	return a, nil
}
