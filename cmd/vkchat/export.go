package main

import (
	"fmt"
	"os"

	"vkchat/runtime/engine"
	"vkchat/runtime/engine/trace"
)

// exportFile is an open --logprobs file; a nil one does nothing, so the
// callers need no checks.
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
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--logprobs: %w", err)
	}
	w, err := trace.NewWriter(f, h, s.TokenText)
	if err != nil {
		f.Close()
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
	if err != nil {
		return fmt.Errorf("--logprobs %s: %w", e.path, err)
	}
	return nil
}
