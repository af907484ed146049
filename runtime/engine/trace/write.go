package trace

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"syscall"

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
func FileSHA256(path string) (string, error) { return FileSHA256Context(context.Background(), path) }

// FileSHA256Context is FileSHA256 that stops, with ctx's error, once ctx
// is done (a model is gigabytes: Ctrl+C must not wait for it), and that
// refuses what is not a regular file (a FIFO would block, /dev/zero never
// end) before reading any of it.
func FileSHA256Context(ctx context.Context, path string) (string, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, 4<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("hash %s: %w", path, err)
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", path, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// OpenRegular opens path for reading if it is a regular file. O_NONBLOCK
// keeps the open of a FIFO from waiting for a writer before the check can
// refuse it; a regular file reads as usual.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	return f, nil
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
		DisableThinking: req.DisableThinking, ReasoningEffort: req.ReasoningEffort}
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
	// JSON has no NaN or infinity: json.Marshal's own error ("unsupported
	// value: NaN") names neither the token nor the cause.
	bad := !finite(line.Logprob)
	for _, a := range line.Top {
		bad = bad || !finite(a.Logprob)
	}
	if bad {
		return fmt.Errorf("token %d (id %d): its log-probability or an alternative's is NaN or infinite, which an export cannot hold: the model's output was not finite", t.Index, t.ID)
	}
	if t.Params != lw.last {
		p := ParamsOf(t.Params)
		line.Params = &p
		lw.last = t.Params
	}
	return lw.line(line)
}

// Lens writes the logit lens at generated token index's position, after
// the tokens.
func (lw *Writer) Lens(index int, p engine.LensPosition) error {
	for _, l := range p.Layers {
		for _, e := range l.Top {
			if !finite(e[1]) || !finite(e[2]) {
				return fmt.Errorf("lens of token %d, layer %d: a logit or probability is NaN or infinite, which an export cannot hold", index, l.Layer)
			}
		}
	}
	return lw.line(Lens{Type: "lens", Index: index, LensPosition: p})
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Flush writes out what is buffered.
func (lw *Writer) Flush() error { return lw.w.Flush() }

// TokenOf is the export line of one token.
func TokenOf(t engine.TokenInfo, text func(int32) string) Token {
	out := Token{Type: "token", Index: t.Index, ID: t.ID, Text: text(t.ID), Logprob: t.LogProb, Forced: t.Forced}
	for _, r := range t.Experts {
		out.Experts = append(out.Experts, Routing{IDs: r.Experts, Weights: r.Weights})
	}
	if m := t.Spec; m != nil {
		out.Spec = &Spec{Source: m.Source, Fate: string(m.Fate)}
		if m.Fate != engine.FateBonus {
			id := m.Draft
			out.Spec.DraftID, out.Spec.DraftText = &id, text(id)
		}
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
