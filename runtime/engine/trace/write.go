package trace

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// Version is vkchat's version as the Go toolchain recorded it: the module
// version, else the VCS revision (with "+dirty" for local changes).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		return rev[:min(len(rev), 12)] + dirty
	}
	if v == "" {
		return "(devel)"
	}
	return v
}

// FileSHA256 hashes a model file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// NewHeader describes a generation of s for an export. Call it before
// Generate: the sampler's state is recorded as the reply finds it.
func NewHeader(s *engine.Session, req engine.Request) (Header, error) {
	info := s.Info()
	sum, err := FileSHA256(info.Path)
	if err != nil {
		return Header{}, err
	}
	state, err := s.SamplerState()
	if err != nil {
		return Header{}, err
	}
	h := Header{Type: "header", Model: info.Path, ModelSHA256: sum, Backend: info.Backend, Context: info.ContextSize,
		KVType: info.KVType, MaxTokens: req.MaxTokens, Params: ParamsOf(s.Params()), SamplerState: state, Vkchat: Version(),
		DisableThinking: req.DisableThinking}
	if info.Completion {
		h.Template = "none"
		for _, m := range req.Messages {
			h.Prompt += m.Content
		}
	} else {
		h.Template, h.Messages = info.TemplateName, req.Messages
	}
	return h, nil
}

// Writer writes an export.
type Writer struct {
	w    *bufio.Writer
	text func(int32) string
	last sample.Params // the settings of the previous line
}

// NewWriter writes h and returns a writer for the tokens; text gives a
// token's piece.
func NewWriter(w io.Writer, h Header, text func(int32) string) (*Writer, error) {
	lw := &Writer{w: bufio.NewWriter(w), text: text, last: h.Params.Sample()}
	h.Type = "header"
	return lw, lw.line(h)
}

func (lw *Writer) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	lw.w.Write(b)
	return lw.w.WriteByte('\n')
}

// Token writes one generated token. A token drawn with other settings
// than the line before it (a key pressed while the reply was written)
// carries them.
func (lw *Writer) Token(t engine.TokenInfo) error {
	line := TokenOf(t, lw.text)
	if t.Params != lw.last {
		p := ParamsOf(t.Params)
		line.Params = &p
		lw.last = t.Params
	}
	return lw.line(line)
}

// Flush writes out what is buffered.
func (lw *Writer) Flush() error { return lw.w.Flush() }

// TokenOf is the export line of one token.
func TokenOf(t engine.TokenInfo, text func(int32) string) Token {
	out := Token{Type: "token", Index: t.Index, ID: t.ID, Text: text(t.ID), Logprob: t.LogProb, Forced: t.Forced}
	for _, r := range t.Experts {
		out.Experts = append(out.Experts, Routing{IDs: r.Experts, Weights: r.Weights})
	}
	if t.Top != nil {
		// Penalties changed what the sampler saw; the export holds the
		// model's own distribution.
		for _, a := range t.Top {
			out.Top = append(out.Top, Alt{ID: a.ID, Text: text(a.ID), Logprob: a.Logprob})
		}
		return out
	}
	out.Top = make([]Alt, len(t.Candidates))
	for i, c := range t.Candidates {
		out.Top[i] = Alt{ID: c.ID, Text: text(c.ID), Logprob: float64(c.Logit) - t.LogZ}
	}
	return out
}
