// Package command is the registry of the chat's slash commands and the
// type its key references share.
//
// Each command is declared once, by the component that owns it: its
// name, aliases, argument shape (with the range of a number), an example,
// its help text and its handler. The root UI only gathers the components'
// lists into one Registry; typing a line and pressing enter is a Parse and
// a Run, so no root code handles one named command. F1, /help and the
// README's command table are drawn from (or checked against) the same
// Registry.
//
// Parsing lives here rather than in ui/input: the argument shapes are
// part of a command's declaration, so the parser reads them from the
// registry and the editor (ui/input) stays a text editor that knows no
// command names.
//
// The registry imports no ui package; every component may import it.
package command
