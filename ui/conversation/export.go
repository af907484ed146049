package conversation

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"

	"vkchat/runtime/engine/trace"

	"vkchat/runtime/engine"
)

// ErrNoLensRead: an export with the lens was asked for a reply none of
// whose tokens had its lens read.
var ErrNoLensRead = errors.New("no token of this reply has had its logit lens read")

// ErrDetailsNotKept: the reply is older than the ones that keep their
// per-token detail (detail.go).
var ErrDetailsNotKept = errors.New("details not kept for this older reply")

// ExportInfo is what a reply's export needs from when it was requested.
type ExportInfo struct {
	Req   engine.Request
	State []byte // the sampler's generator state as the reply began
}

// exportHeader describes how reply t was generated.
func exportHeader(info engine.ModelInfo, maxTokens int, t *Turn) (trace.Header, error) {
	first, ok := t.StepInfo(0)
	if !ok {
		return trace.Header{}, ErrDetailsNotKept
	}
	sum, err := trace.FileSHA256(info.Path)
	if err != nil {
		return trace.Header{}, fmt.Errorf("hash the model file: %w", err)
	}
	h := trace.Header{Type: "header", Model: info.Path, ModelSHA256: sum, Backend: info.Backend,
		Context: info.ContextSize, KVType: info.KVType, MaxTokens: maxTokens,
		Params: trace.ParamsOf(first.Params), SamplerState: t.Export.State, Vkchat: trace.Version(),
		DisableThinking: t.Export.Req.DisableThinking, ReasoningEffort: t.Export.Req.ReasoningEffort}
	if info.Completion {
		h.Template = "none"
		for _, msg := range t.Export.Req.Messages {
			h.Prompt += msg.Content
		}
	} else {
		h.Template, h.Messages = info.TemplateName, t.Export.Req.Messages
	}
	return h, nil
}

// WriteExport writes reply t as the JSON Lines export vkchat replay reads:
// a header saying how it was generated, then every token with its
// log-probability and alternatives, then — lens not nil — the logit lens
// of each token in lens (keyed by the token's index; at least one, else
// ErrNoLensRead), in order. text gives a token's piece. The file
// is written whole or not at all (as Write does: a temporary file renamed
// over path), so an error midway never leaves an export replay cannot
// read, and a FIFO or device is refused rather than opened.
func WriteExport(path string, info engine.ModelInfo, maxTokens int, t *Turn, text func(int32) string, lens map[int]*engine.LensPosition) (err error) {
	if lens != nil && len(lens) == 0 {
		return ErrNoLensRead
	}
	h, err := exportHeader(info, maxTokens, t)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, h, text)
	if err != nil {
		return err
	}
	for k := range t.Steps {
		s, ok := t.StepInfo(k)
		if !ok {
			return ErrDetailsNotKept
		}
		if err := w.Token(s); err != nil {
			return fmt.Errorf("%s: not written: %w", path, err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(lens)) {
		if err := w.Lens(k, *lens[k]); err != nil {
			return fmt.Errorf("%s: not written: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return writeAtomic(path, buf.Bytes())
}
