package engine

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
)

// The logprob export is JSON Lines: one LogprobHeader, then one LogprobToken
// per generated token. It holds what is needed to run the generation again
// (vkchat replay) and to check that it reproduces.

// LogprobHeader is the first line of an export.
type LogprobHeader struct {
	Type        string `json:"type"` // "header"
	Model       string `json:"model"`
	ModelSHA256 string `json:"model_sha256"`
	Backend     string `json:"backend"`
	Context     int    `json:"context"`
	// Prompt is the plain text of a completion (vkchat run); a chat
	// records Messages and the Template that rendered them instead.
	Prompt   string         `json:"prompt,omitempty"`
	Messages []chat.Message `json:"messages,omitempty"`
	Template string         `json:"template"` // "none" for plain completion
	// DisableThinking: the template was rendered with enable_thinking=false.
	DisableThinking bool          `json:"disable_thinking,omitempty"`
	KVType          string        `json:"kv_type,omitempty"`
	MaxTokens       int           `json:"max_tokens"`
	Params          LogprobParams `json:"params"`
	// SamplerState is the generator's state when the reply began, so a
	// reply that was not its session's first still replays exactly.
	SamplerState []byte `json:"sampler_state,omitempty"`
	Vkchat       string `json:"vkchat"`
}

// LogprobParams names the sampler settings in the export.
type LogprobParams struct {
	Temperature      float32 `json:"temperature"`
	TopK             int     `json:"top_k"`
	TopP             float32 `json:"top_p"`
	MinP             float32 `json:"min_p"`
	RepeatPenalty    float32 `json:"repeat_penalty"`
	RepeatLastN      int     `json:"repeat_last_n"`
	PresencePenalty  float32 `json:"presence_penalty"`
	FrequencyPenalty float32 `json:"frequency_penalty"`
	Seed             uint64  `json:"seed"`
}

// ExportParams converts sampler settings for the export.
func ExportParams(p sample.Params) LogprobParams {
	return LogprobParams{p.Temperature, p.TopK, p.TopP, p.MinP, p.RepeatPenalty, p.RepeatLastN, p.PresencePenalty, p.FrequencyPenalty, p.Seed}
}

// Sample converts them back.
func (p LogprobParams) Sample() sample.Params {
	return sample.Params{Temperature: p.Temperature, TopK: p.TopK, TopP: p.TopP, MinP: p.MinP, RepeatPenalty: p.RepeatPenalty,
		RepeatLastN: p.RepeatLastN, PresencePenalty: p.PresencePenalty, FrequencyPenalty: p.FrequencyPenalty, Seed: p.Seed}
}

// LogprobToken is one generated token with the most likely alternatives.
// Log-probabilities are natural logs of the model's distribution: the
// softmax of the logits before penalties, truncation and temperature.
type LogprobToken struct {
	Type    string       `json:"type"` // "token"
	Index   int          `json:"index"`
	ID      int32        `json:"id"`
	Text    string       `json:"text"`
	Logprob float64      `json:"logprob"`
	Forced  bool         `json:"forced,omitempty"` // chosen by the user (a fork), not drawn
	Top     []LogprobAlt `json:"top"`
	// Params, when set, are the settings this token and the ones after it
	// were drawn with: they changed while the reply was generated.
	Params *LogprobParams `json:"params,omitempty"`
}

// LogprobAlt is one of the most likely tokens at a step.
type LogprobAlt struct {
	ID      int32   `json:"id"`
	Text    string  `json:"text"`
	Logprob float64 `json:"logprob"`
}

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

// ExportHeader describes a generation of this session for an export. Call
// it before Generate: the sampler's state is recorded as the reply finds it.
func (s *Session) ExportHeader(req Request) (LogprobHeader, error) {
	info := s.Info()
	sum, err := FileSHA256(info.Path)
	if err != nil {
		return LogprobHeader{}, err
	}
	state, err := s.SamplerState()
	if err != nil {
		return LogprobHeader{}, err
	}
	h := LogprobHeader{Type: "header", Model: info.Path, ModelSHA256: sum, Backend: info.Backend, Context: info.ContextSize,
		KVType: info.KVType, MaxTokens: req.MaxTokens, Params: ExportParams(s.Params()), SamplerState: state, Vkchat: Version(),
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

// SamplerState is the sampler's generator state, for an export.
func (s *Session) SamplerState() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sampler.State()
}

// SetSamplerState restores a state SamplerState returned (for replay).
func (s *Session) SetSamplerState(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sampler.SetState(b)
}

// LogprobWriter writes an export.
type LogprobWriter struct {
	w    *bufio.Writer
	text func(int32) string
	n    int
	last sample.Params // the settings of the previous line
}

// NewLogprobWriter writes h and returns a writer for the tokens; text
// gives a token's piece.
func NewLogprobWriter(w io.Writer, h LogprobHeader, text func(int32) string) (*LogprobWriter, error) {
	lw := &LogprobWriter{w: bufio.NewWriter(w), text: text, last: h.Params.Sample()}
	h.Type = "header"
	return lw, lw.line(h)
}

func (lw *LogprobWriter) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	lw.w.Write(b)
	return lw.w.WriteByte('\n')
}

// Token writes one generated token.
// A token drawn with other settings than the line before it (a key
// pressed while the reply was written) carries them.
func (lw *LogprobWriter) Token(t TokenInfo) error {
	lw.n++
	line := TokenLine(t, lw.text)
	if t.Params != lw.last {
		p := ExportParams(t.Params)
		line.Params = &p
		lw.last = t.Params
	}
	return lw.line(line)
}

// Flush writes out what is buffered.
func (lw *LogprobWriter) Flush() error { return lw.w.Flush() }

// TokenLine is the export line of one token.
func TokenLine(t TokenInfo, text func(int32) string) LogprobToken {
	out := LogprobToken{Type: "token", Index: t.Index, ID: t.ID, Text: text(t.ID), Logprob: t.LogProb, Forced: t.Forced}
	if t.Top != nil {
		// Penalties changed what the sampler saw; the export holds the
		// model's own distribution.
		for _, a := range t.Top {
			out.Top = append(out.Top, LogprobAlt{ID: a.ID, Text: text(a.ID), Logprob: a.Logprob})
		}
		return out
	}
	out.Top = make([]LogprobAlt, len(t.Candidates))
	for i, c := range t.Candidates {
		out.Top[i] = LogprobAlt{ID: c.ID, Text: text(c.ID), Logprob: float64(c.Logit) - t.LogZ}
	}
	return out
}

// ReadLogprobs reads an export, checking every line.
func ReadLogprobs(r io.Reader, name string) (LogprobHeader, []LogprobToken, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var h LogprobHeader
	var toks []LogprobToken
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
		case kind.Type == "token":
			var t LogprobToken
			if err := json.Unmarshal(line, &t); err != nil {
				return h, nil, fmt.Errorf("%s: line %d: %w", name, n, err)
			}
			if t.Index != len(toks) {
				return h, nil, fmt.Errorf("%s: line %d: field \"index\" is %d, want %d (tokens in order)", name, n, t.Index, len(toks))
			}
			toks = append(toks, t)
		default:
			return h, nil, fmt.Errorf("%s: line %d: field \"type\" is %q, want \"token\"", name, n, kind.Type)
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

// ReplayResult is what a replay found.
type ReplayResult struct {
	Checked int // tokens generated again and compared
	// Given counts the tokens before the export's last forced one: a fork
	// keeps them from the reply it was forked from, so they are the
	// replay's prefix rather than generated again.
	Given int
}

// Mismatch is the first token a replay did not reproduce.
type Mismatch struct {
	Index             int
	Want, Got         int32
	WantText, GotText string
	WantLogp, GotLogp float64
	Ended             bool // the replay stopped before this token
}

func (e *Mismatch) Error() string {
	switch {
	case e.Ended:
		return fmt.Sprintf("replay ended before token %d (recorded %d %q)", e.Index, e.Want, e.WantText)
	case e.Want != e.Got:
		return fmt.Sprintf("token %d differs: recorded %d %q (logprob %.6f), replay %d %q (logprob %.6f)",
			e.Index, e.Want, e.WantText, e.WantLogp, e.Got, e.GotText, e.GotLogp)
	}
	return fmt.Sprintf("token %d (%d %q) is the same but its logprob differs: recorded %v, replay %v (Δ %.3g)",
		e.Index, e.Want, e.WantText, e.WantLogp, e.GotLogp, e.GotLogp-e.WantLogp)
}

// Replay generates an export's tokens again on this session, which must be
// loaded as the header says, and returns a *Mismatch at the first token or
// log-probability that differs. The sampler starts from the recorded state;
// a forked reply continues from its recorded prefix with its forced token.
func (s *Session) Replay(ctx context.Context, h LogprobHeader, toks []LogprobToken) (ReplayResult, error) {
	if len(toks) == 0 {
		return ReplayResult{}, errors.New("no tokens to replay")
	}
	msgs := h.Messages
	if h.Template == "none" || len(msgs) == 0 {
		msgs = []chat.Message{{Role: chat.RoleUser, Content: h.Prompt}}
	}
	start := 0
	for i, t := range toks {
		if t.Forced {
			start = i
		}
	}
	// The settings in force at the first replayed token; then the
	// recorded state, since a changed seed reseeds the sampler.
	p := h.Params
	for _, t := range toks[:start+1] {
		if t.Params != nil {
			p = *t.Params
		}
	}
	s.SetParams(p.Sample())
	if len(h.SamplerState) > 0 {
		if err := s.SetSamplerState(h.SamplerState); err != nil {
			return ReplayResult{}, fmt.Errorf("field \"sampler_state\": %w", err)
		}
	}
	req := Request{Messages: msgs, MaxTokens: len(toks), DisableThinking: h.DisableThinking}
	if toks[start].Forced {
		prefix := make([]int32, start)
		for i := range prefix {
			prefix[i] = toks[i].ID
		}
		req.Fork = &ForkPoint{Prefix: prefix, Token: toks[start].ID}
	}
	var got []TokenInfo
	err := s.Generate(ctx, req, func(ev Event) {
		if ev.Kind != EventToken {
			return
		}
		got = append(got, *ev.Token)
		// emit runs before the next token is drawn, so a change of
		// settings lands exactly where it did when the export was made.
		if next := start + len(got); next < len(toks) && toks[next].Params != nil {
			s.SetParams(toks[next].Params.Sample())
		}
	})
	res := ReplayResult{Given: start}
	if err != nil {
		return res, err
	}
	text := func(id int32) string { return s.TokenText(id) }
	for i, want := range toks[start:] {
		m := &Mismatch{Index: start + i, Want: want.ID, WantText: text(want.ID), WantLogp: want.Logprob}
		if i >= len(got) {
			m.Ended = true
			return res, m
		}
		g := got[i]
		m.Got, m.GotText, m.GotLogp = g.ID, text(g.ID), g.LogProb
		if g.ID != want.ID || g.LogProb != want.Logprob {
			return res, m
		}
		res.Checked++
	}
	return res, nil
}
