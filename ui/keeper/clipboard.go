package keeper

import (
	"errors"
	"io"
	"os"
	"strings"

	"github.com/atotto/clipboard"
	"github.com/aymanbagabas/go-osc52/v2"
)

// Copier puts text on the clipboard two ways, as Charm's tools do: an
// OSC 52 sequence, which the terminal itself carries out (over SSH too,
// where no local clipboard is the user's), and the system clipboard
// through atotto/clipboard (xclip, xsel, wl-copy, pbcopy, Windows), for
// terminals that ignore OSC 52. It fails only when neither can have
// worked: no terminal to write to and no clipboard tool.
type Copier func(text string) (how string, err error)

// SystemCopier writes OSC 52 to out (the terminal) and tries the system
// clipboard.
func SystemCopier(out io.Writer) Copier { return OSC52Copier(out, clipboard.WriteAll) }

// OSC52Copier is SystemCopier with the system clipboard's writer given.
func OSC52Copier(out io.Writer, writeAll func(string) error) Copier {
	return func(text string) (string, error) {
		var ways []string
		seq := osc52.New(text)
		switch {
		case os.Getenv("TMUX") != "":
			seq = seq.Tmux()
		case strings.HasPrefix(os.Getenv("TERM"), "screen"):
			seq = seq.Screen()
		}
		oscErr := errors.New("no terminal")
		if out != nil {
			if _, oscErr = seq.WriteTo(out); oscErr == nil {
				ways = append(ways, "OSC 52")
			}
		}
		clipErr := writeAll(text)
		if clipErr == nil {
			ways = append(ways, "system clipboard")
		}
		if len(ways) == 0 {
			return "", errors.Join(oscErr, clipErr)
		}
		return strings.Join(ways, " + "), nil
	}
}
