package gguf

import (
	"errors"
	"fmt"
)

// ErrFormat is wrapped by every error about the contents of a file, so callers
// can tell a bad file from an I/O failure.
var ErrFormat = errors.New("malformed GGUF")

// FormatError names the file, the field (a key, a tensor, or a header part)
// and what was wrong with it.
type FormatError struct {
	Path  string
	Field string
	Msg   string
}

func (e *FormatError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.Path, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Path, e.Field, e.Msg)
}

func (e *FormatError) Unwrap() error { return ErrFormat }
