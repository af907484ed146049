package arch

import (
	"errors"
	"strings"
	"testing"

	"vkchat/internal/ggufspec"
	"vkchat/runtime/gguf"
)

// FuzzLoad: whatever Parse accepts, Load either rejects with a one-line
// error or returns a model whose every weight lies inside its data, so the
// backends can index it without checks of their own.
func FuzzLoad(f *testing.F) {
	base := ggufspec.Tiny()
	f.Add(encode(f, base))
	for _, c := range loadCases(base) {
		s := base.Clone()
		c.edit(f, s)
		f.Add(encode(f, s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := gguf.Parse("fuzz.gguf", data)
		if err != nil {
			return
		}
		m, err := Load(file)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r\x1b") {
				t.Fatalf("error %q is not one clean line", err)
			}
			if !errors.Is(err, gguf.ErrFormat) && !strings.Contains(err.Error(), "is not supported (supported:") {
				t.Fatalf("error %q does not wrap gguf.ErrFormat", err)
			}
			return
		}
		checkModel(t, m)
	})
}
