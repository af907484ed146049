package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"vkchat/runtime/backend"
	"vkchat/runtime/engine"
	"vkchat/runtime/engine/trace"
	"vkchat/ui/termtext"
)

func init() {
	register(command{name: "replay", summary: "re-run a --logprobs export and check that every token reproduces", run: runReplay})
}

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", "[--model FILE] [--threads N] EXPORT.jsonl", stderr)
	model := fs.String("model", "", "model file, or demo (default: the path the export recorded; its SHA-256 must match)")
	threads := fs.Int("threads", 0, "CPU threads (0: one per physical core)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		fs.Usage()
		return errors.New("want exactly one export file")
	}
	path := files[0]
	f, err := trace.OpenRegular(path)
	if err != nil {
		return err
	}
	h, toks, err := trace.Read(f, path)
	f.Close()
	if err != nil {
		return err
	}
	if len(toks) == 0 {
		return fmt.Errorf("%s: no token lines: nothing to replay", path)
	}
	if *model == "" {
		*model = h.Model
	}
	if *model, err = modelPath(*model); err != nil {
		return err
	}
	sum, err := trace.FileSHA256Context(ctx, *model)
	if err != nil {
		return err
	}
	if h.ModelSHA256 != "" && sum != h.ModelSHA256 {
		return fmt.Errorf("%s has SHA-256 %s but %s was recorded with %s (%s): not the same model", *model, sum, path, h.ModelSHA256, h.Model)
	}
	tmpl := h.Template
	if tmpl == "gguf" {
		tmpl = "" // the model's own template, as the chat names it
	}
	// the cache type as the export recorded it: "q8_0", or "keys/values"
	kvK, kvV, _ := strings.Cut(h.KVType, "/")
	s, err := engine.Load(ctx, *model, engine.Options{Backend: h.Backend, ContextSize: h.Context, Threads: *threads, Device: -1,
		KVType: backend.KVType(kvK), KVTypeV: backend.KVType(kvV), Params: h.Params.Sample(), Template: tmpl})
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := trace.Replay(ctx, s, h, toks)
	var mm *trace.Mismatch
	if errors.As(err, &mm) {
		mm.WantText, mm.GotText = termtext.Visible(mm.WantText), termtext.Visible(mm.GotText)
		return mm
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	given := ""
	if res.Given > 0 {
		given = fmt.Sprintf(" after the %d tokens it was forked from", res.Given)
	}
	fmt.Fprintf(stdout, "replay: all %d tokens and logprobs match%s (%s on %s, model sha256 %s…)\n",
		res.Checked, given, termtext.Sanitize(*model), s.Info().Backend, sum[:12])
	return nil
}
