package trace

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Read reads an export, checking every line; name is the file's name for
// the errors.
func Read(r io.Reader, name string) (Header, []Token, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var h Header
	var toks []Token
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var kind struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &kind); err != nil {
			return h, nil, fmt.Errorf("%s: line %d: not JSON: %w", name, n, err)
		}
		switch {
		case n == 1 && kind.Type != "header":
			return h, nil, fmt.Errorf("%s: line 1: field \"type\" is %q, want \"header\"", name, kind.Type)
		case n == 1:
			if err := json.Unmarshal(line, &h); err != nil {
				return h, nil, fmt.Errorf("%s: line 1: %w", name, err)
			}
			if h.Model == "" {
				return h, nil, fmt.Errorf("%s: line 1: field \"model\" is empty", name)
			}
			// the ranges the chat's commands hold a user to
			var probe struct {
				Params json.RawMessage `json:"params"`
			}
			_ = json.Unmarshal(line, &probe)
			if err := h.Params.Sample().Check(); len(probe.Params) > 0 && err != nil {
				return h, nil, fmt.Errorf("%s: line 1: field \"params\": %w", name, err)
			}
		case kind.Type == "token":
			var t Token
			if err := json.Unmarshal(line, &t); err != nil {
				return h, nil, fmt.Errorf("%s: line %d: %w", name, n, err)
			}
			if t.Params != nil {
				if err := t.Params.Sample().Check(); err != nil {
					return h, nil, fmt.Errorf("%s: line %d: field \"params\": %w", name, n, err)
				}
			}
			if t.Index != len(toks) {
				return h, nil, fmt.Errorf("%s: line %d: field \"index\" is %d, want %d (tokens in order)", name, n, t.Index, len(toks))
			}
			toks = append(toks, t)
		case kind.Type == "lens":
			// the lens of a token read in the chat: checked, not replayed
			var l Lens
			if err := json.Unmarshal(line, &l); err != nil {
				return h, nil, fmt.Errorf("%s: line %d: %w", name, n, err)
			}
			if l.Index < 0 || l.Index >= len(toks) {
				return h, nil, fmt.Errorf("%s: line %d: field \"index\" is %d, want a token above it (0 to %d)", name, n, l.Index, len(toks)-1)
			}
		default:
			return h, nil, fmt.Errorf("%s: line %d: field \"type\" is %q, want \"token\" or \"lens\"", name, n, kind.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return h, nil, fmt.Errorf("%s: %w", name, err)
	}
	if n == 0 {
		return h, nil, errors.New(name + ": empty file, no header line")
	}
	return h, toks, nil
}
