package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"vkchat/runtime/gguf"
	"vkchat/runtime/tokenizer"
)

func init() {
	register(command{name: "tokenize", summary: "tokenize stdin with a model's vocabulary", run: runTokenize})
}

func runTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return tokenizeFrom(os.Stdin, args, stdout, stderr)
}

func tokenizeFrom(stdin io.Reader, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tokenize", "--model FILE [--no-bos] [--special] < text", stderr)
	model := fs.String("model", "", "GGUF model or vocabulary file, or demo for the model built into vkchat")
	noBOS := fs.Bool("no-bos", false, "do not add BOS/EOS")
	special := fs.Bool("special", false, "recognise special-token text such as <|im_start|>")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *model == "" {
		return fmt.Errorf("no model: pass --model FILE")
	}
	path, err := modelPath(*model)
	if err != nil {
		return err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return err
	}
	text, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	ids := tok.Encode(string(text), !*noBOS, *special)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	fmt.Fprintln(stdout, strings.Join(parts, " "))
	return nil
}
