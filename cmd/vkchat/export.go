package main

import (
	"fmt"
	"os"
	"path/filepath"

	"vkchat/runtime/engine"
	"vkchat/runtime/engine/trace"
)

// exportFile is an open --logprobs file; a nil one does nothing, so the
// callers need no checks. It is written to a temporary file beside path
// and renamed over path when it closes without an error, so a failure
// midway (a token JSON cannot hold, a full disk) leaves no export that
// replay cannot read.
type exportFile struct {
	path string
	f    *os.File
	w    *trace.Writer
	err  error
}

// openExport starts the export of req's generation on s at path ("" for none).
func openExport(path string, s *engine.Session, req engine.Request) (*exportFile, error) {
	if path == "" {
		return nil, nil
	}
	h, err := trace.NewHeader(s, req)
	if err != nil {
		return nil, fmt.Errorf("--logprobs: %w", err)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		// the rename would replace a FIFO or a device with a regular file
		return nil, fmt.Errorf("--logprobs %s: not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("--logprobs: %w", err)
	}
	w, err := trace.NewWriter(f, h, s.TokenText)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("--logprobs %s: %w", path, err)
	}
	return &exportFile{path: path, f: f, w: w}, nil
}

func (e *exportFile) token(t engine.TokenInfo) {
	if e == nil || e.err != nil {
		return
	}
	e.err = e.w.Token(t)
}

func (e *exportFile) close() error {
	if e == nil {
		return nil
	}
	err := e.err
	if ferr := e.w.Flush(); err == nil {
		err = ferr
	}
	if cerr := e.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(e.f.Name(), e.path)
	}
	if err != nil {
		os.Remove(e.f.Name())
		return fmt.Errorf("--logprobs %s: not written: %w", e.path, err)
	}
	return nil
}
