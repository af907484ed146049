// Command vkchat is a terminal chat for local GGUF models that shows what
// inference is doing while it happens. Each subcommand lives in its own file
// and registers itself in commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"vkchat/ui/termtext"
)

// command is one subcommand. run gets the arguments after the subcommand
// name and returns an error to print; flag.ErrHelp means usage was shown.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// defaultCommand runs when vkchat is started without a subcommand.
const defaultCommand = "chat"

func main() {
	// SIGHUP (the terminal closed) ends the chat like SIGTERM: the
	// conversation is saved and the terminal restored.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := defaultCommand
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		usage(stdout)
		return 0
	}
	if name == "help" {
		usage(stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "vkchat: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	if err := c.run(ctx, args, stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		// Errors quote paths, conversation text and template messages
		// (raise_exception), none of which may drive the terminal.
		fmt.Fprintf(stderr, "vkchat %s: %s\n", name, termtext.Sanitize(err.Error()))
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "vkchat — chat with a local GGUF model and watch inference happen")
	fmt.Fprintln(w, "\nUsage: vkchat [command] [flags]   (no command: chat)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'vkchat COMMAND --help' for a command's flags.")
}

// newFlags makes a FlagSet that reports errors instead of exiting, with a
// usage line naming the command.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: vkchat %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseInterspersed is fs.Parse for commands that take file arguments:
// flags may stand before or after the files ("info FILE --ctx 8192" as well
// as "info --ctx 8192 FILE"), as users type them; after "--" everything is
// a file. It returns the files in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		// flag stops at the first non-flag, or just past a "--" it
		// consumed: then the rest are files whatever they look like.
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(files, rest...), nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}
