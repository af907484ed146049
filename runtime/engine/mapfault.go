package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"vkchat/runtime/backend"
)

// ErrModelChanged is a fault reading the memory-mapped model file: it was
// truncated or rewritten while the session had it open. Without a guard
// the read is a SIGBUS that kills the program; with one (mapped), the
// reply ends with this error and the chat goes on.
var ErrModelChanged = errors.New("model file changed on disk")

// mapped runs fn, a backend call that reads the model's mapped weights,
// with memory faults turned into panics (runtime/debug.SetPanicOnFault) on
// this goroutine, and a fault into ErrModelChanged naming the file. The
// CPU backend's worker goroutines do the same and hand their fault to the
// caller (runtime/quant's pool). Other panics go on.
func (s *Session) mapped(fn func() error) error {
	return guardMapped(s.file.Path, "reload it to go on", fn)
}

// guardMapped is mapped for the file at path, before there is a session:
// Load runs the reading of the model (its metadata, the backend's packing
// of weights and its uploads) under it, so a file truncated while loading
// is an error too. then says what to do about it.
func guardMapped(path, then string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = fmt.Errorf("%w: %s (%s)", ErrModelChanged, path, then)
		}
	}()
	return fn()
}

// checkMapped refuses to read a model file truncated since Load: the
// native kernels read the mapping from C, where a fault cannot be turned
// into a panic, so a truncation before a reply is caught here; one
// during a reply is left to mapped (the Go kernels).
func (s *Session) checkMapped() error {
	if err := s.file.CheckMapped(); err != nil {
		return fmt.Errorf("%w: %s (reload it to go on)", ErrModelChanged, s.file.Path)
	}
	return nil
}

// trackState records where the recurrent state is after a forward pass
// that ended at end: unknown (-1) after a failure, which may have folded
// in part of the tokens.
func (s *Session) trackState(end int, err error) {
	if err != nil {
		end = -1
	}
	s.stateAt = end
}

// forward is s.be.Forward, guarded by mapped.
func (s *Session) forward(ctx context.Context, tokens []int32, pos int, all bool) (logits []float32, err error) {
	err = s.mapped(func() error {
		logits, err = s.be.Forward(ctx, tokens, pos, all)
		return err
	})
	s.trackState(pos+len(tokens), err)
	return logits, err
}

// forwardHead is hb.ForwardHead, guarded by mapped.
func (s *Session) forwardHead(ctx context.Context, hb backend.HeadBackend, tokens []int32, pos, k int) (h backend.Head, ok bool, err error) {
	err = s.mapped(func() error {
		h, ok, err = hb.ForwardHead(ctx, tokens, pos, k)
		return err
	})
	s.trackState(pos+len(tokens), err)
	return h, ok, err
}
