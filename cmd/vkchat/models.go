package main

import (
	"context"
	"fmt"
	"io"

	"vkchat/models/hub"
	"vkchat/models/store"
)

func init() {
	register(command{name: "models", summary: "list the models in the local store", run: runModels})
}

func runModels(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("models", "[flags]", stderr)
	dir := fs.String("dir", "", "model store `directory` (default $VKCHAT_MODELS, else $XDG_CACHE_HOME/vkchat/models)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("models takes no arguments, got %q", fs.Args())
	}
	d := *dir
	if d == "" {
		d = store.Dir()
	}
	models, err := store.ListDir(d)
	if err != nil {
		return err
	}
	if len(models) == 0 {
		fmt.Fprintf(stdout, "No models in %s yet. Download one with:\n  vkchat pull %s\n", d, hub.DefaultModel)
		return nil
	}
	return store.WriteTable(stdout, models)
}
