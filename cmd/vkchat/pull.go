package main

import (
	"context"
	"fmt"
	"io"

	"vkchat/models/hub"
)

func init() {
	register(command{name: "pull", summary: "download a model into the local store", run: runPull})
}

// runPull is thin on purpose: resolution, download and progress live in
// models/hub, where they are tested against a fake Hub.
func runPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pull", "[flags] [REF]\n\nREF is hf:OWNER/REPO[:QUANT], an http(s) URL or a .gguf path\n(default "+hub.DefaultModel+").\nSet HF_TOKEN for gated repos and HF_ENDPOINT for a mirror.", stderr)
	dir := fs.String("dir", "", "model store `directory` (default $VKCHAT_MODELS, else $XDG_CACHE_HOME/vkchat/models)")
	quiet := fs.Bool("q", false, "print no progress, only the final path")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return fmt.Errorf("pull takes one model reference, got %d", fs.NArg())
	}
	ref := hub.DefaultModel
	if fs.NArg() == 1 {
		ref = fs.Arg(0)
	}
	pr := &hub.Printer{W: stderr, TTY: hub.IsTerminal(stderr)}
	opts := hub.Options{Dir: *dir}
	if !*quiet {
		opts.Progress = pr.Update
		opts.Log = func(s string) { pr.Done(); fmt.Fprintln(stderr, s) }
	}
	path, err := hub.Pull(ctx, ref, opts)
	pr.Done()
	if err != nil {
		return err
	}
	// The path alone on stdout, so scripts can use $(vkchat pull -q REF).
	fmt.Fprintln(stdout, path)
	return nil
}
