package conversation

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
)

// Saved describes one saved conversation for /chats.
type Saved struct {
	Name    string // what /load takes: the file name without ".json"
	Path    string
	Updated time.Time
	Model   string // the model's name as saved
	Turns   int    // messages, the system prompt left out
	First   string // the first user message, on one line
	Err     error  // the file would not load; the other fields but Name and Path are empty
}

// MaxListed bounds /chats: the newest conversations are what one opens.
const MaxListed = 50

// ListSaved lists the conversations saved in dir (JSON files; Markdown
// copies are for reading), newest first, at most MaxListed. A missing dir
// is an empty list.
func ListSaved(dir string) ([]Saved, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type file struct {
		name string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(n, ".") || filepath.Ext(n) != ".json" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, file{n, info.ModTime()})
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Or(b.mod.Compare(a.mod), strings.Compare(a.name, b.name)) })
	files = files[:min(len(files), MaxListed)]
	out := make([]Saved, 0, len(files))
	for _, f := range files {
		s := Saved{Name: strings.TrimSuffix(f.name, ".json"), Path: filepath.Join(dir, f.name), Updated: f.mod}
		c, err := Read(s.Path, sample.Defaults())
		if err != nil {
			s.Err = err
			out = append(out, s)
			continue
		}
		s.Model = cmp.Or(c.ModelName, filepath.Base(c.Model))
		for _, m := range c.Messages {
			if m.Role == chat.RoleSystem {
				continue
			}
			s.Turns++
			if s.First == "" && m.Role == chat.RoleUser {
				s.First = strings.Join(strings.Fields(m.Content), " ")
			}
		}
		if !c.Updated.IsZero() {
			s.Updated = c.Updated
		}
		out = append(out, s)
	}
	return out, nil
}
