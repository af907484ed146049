package main

import (
	"context"
	"fmt"
	"io"

	"vkchat/models/store"
)

func init() {
	register(command{name: "rm", summary: "delete a model from the local store", run: runRm})
}

func runRm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rm", "[flags] NAME\n\nNAME is a name from 'vkchat models', or a unique prefix of it or of its file name.", stderr)
	dir := fs.String("dir", "", "model store `directory` (default $VKCHAT_MODELS, else $XDG_CACHE_HOME/vkchat/models)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("rm takes one model name, got %d", fs.NArg())
	}
	d := *dir
	if d == "" {
		d = store.Dir()
	}
	m, err := store.RemoveDir(d, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %s (%s, %s)\n", m.Name, m.Path, store.FormatSize(m.Size))
	return nil
}
