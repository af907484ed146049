// Package store is the local model store: the directory vkchat pulls models
// into, and the listing the "models" and "rm" commands and the chat's model
// picker read.
//
// The layout is plain files, so a user can drop a .gguf in by hand:
//
//	<Dir>/<owner>/<repo>/<file>.gguf   models pulled with hf:OWNER/REPO
//	<Dir>/<host>/<file>.gguf           models pulled from a plain URL
//	<Dir>/<anything>.gguf              files copied in by the user
//
// A model's Name is its path below Dir, with "/" separators and without the
// .gguf suffix. Downloads in progress end in .partial and are never listed.
package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// Ext is the suffix of a complete model file.
const Ext = ".gguf"

// Model is one model file in the store.
type Model struct {
	Name   string // path below Dir without .gguf, "/"-separated
	Path   string // absolute path of the file
	Arch   string // general.architecture
	Params int64  // sum of the element counts of all tensors
	Quant  string // general.file_type name, or the dominant tensor type
	Size   int64  // bytes on disk
	// Err is set when the file is not a valid GGUF. Such files are still
	// listed, so the user can see and remove them, but callers that want to
	// load a model (the chat's picker) should skip them.
	Err error
}

// Dir is the store directory: $VKCHAT_MODELS, else
// $XDG_CACHE_HOME/vkchat/models, else ~/.cache/vkchat/models. It is not
// created here; Pull creates what it needs.
func Dir() string {
	if d := os.Getenv("VKCHAT_MODELS"); d != "" {
		return absOr(d)
	}
	// The XDG spec says relative values are invalid and must be ignored.
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "vkchat", "models")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".cache", "vkchat", "models")
	}
	// No home directory (a bare container): a per-user temp dir still works,
	// it just does not survive reboots.
	return filepath.Join(os.TempDir(), "vkchat-"+currentUser(), "models")
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return fmt.Sprint(os.Getuid())
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// List returns the models in Dir, sorted by name. A missing store is empty,
// not an error: nothing has been pulled yet.
func List() ([]Model, error) { return ListDir(Dir()) }

// ListDir is List for an explicit store directory.
func ListDir(dir string) ([]Model, error) {
	var models []Model
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), Ext) {
			return nil
		}
		// Symlinks are followed by Inspect (os.Stat/gguf.Open) so a user can
		// link a model kept elsewhere into the store.
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		m := Inspect(path)
		m.Name = strings.TrimSuffix(filepath.ToSlash(rel), Ext)
		models = append(models, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list models in %s: %w", dir, err)
	}
	sort.Slice(models, func(i, j int) bool { return models[i].Name < models[j].Name })
	return models, nil
}

// Inspect reads the metadata of one model file. Name is the file name
// without .gguf; List replaces it with the store-relative name.
func Inspect(path string) Model {
	m := Model{Name: strings.TrimSuffix(filepath.Base(path), Ext), Path: absOr(path)}
	if st, err := os.Stat(path); err == nil {
		m.Size = st.Size()
	}
	f, err := gguf.Open(path)
	if err != nil {
		m.Err = err
		return m
	}
	defer f.Close()
	if m.Arch, err = f.Architecture(); err != nil {
		m.Err = err
	}
	types := map[ggml.Type]uint64{}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		n := t.Elements()
		m.Params += int64(n)
		types[t.Type] += n
	}
	m.Quant = quantName(f, types)
	return m
}

// quantName prefers general.file_type, which names the recipe (Q4_K_M mixes
// Q4_K and Q6_K tensors); without it the type holding the most elements is
// the best single description.
func quantName(f *gguf.File, types map[ggml.Type]uint64) string {
	if ft, ok, err := f.Uint("general.file_type"); ok && err == nil {
		if name, known := FileTypeName(ft); known {
			return name
		}
	}
	best, bestN := ggml.Type(0), uint64(0)
	for t, n := range types {
		// Ties break on the type id so the answer does not depend on map order.
		if n > bestN || (n == bestN && t < best) {
			best, bestN = t, n
		}
	}
	if bestN == 0 {
		return ""
	}
	return best.String()
}

// Find resolves a user-typed name: an exact name first, then a unique prefix
// of the name or of the file's base name (so "SmolLM2" finds
// "bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q8_0").
// An ambiguous prefix is an error listing the matches.
func Find(models []Model, name string) (Model, error) {
	name = strings.TrimSuffix(filepath.ToSlash(name), Ext)
	if name == "" {
		return Model{}, errors.New("empty model name")
	}
	for _, m := range models {
		if m.Name == name {
			return m, nil
		}
	}
	var matches []Model
	for _, m := range models {
		if strings.HasPrefix(m.Name, name) || strings.HasPrefix(baseName(m.Name), name) {
			matches = append(matches, m)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return Model{}, fmt.Errorf("no model named %q (run 'vkchat models' to list them)", name)
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.Name
	}
	return Model{}, fmt.Errorf("%q is ambiguous, it matches %d models:\n  %s", name, len(matches), strings.Join(names, "\n  "))
}

func baseName(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[i+1:]
	}
	return name
}

// Remove deletes the model Find(name) picks from Dir and returns it.
func Remove(name string) (Model, error) { return RemoveDir(Dir(), name) }

// RemoveDir is Remove for an explicit store directory. Directories left empty
// (an owner/repo with no models left) are removed too, up to dir itself.
func RemoveDir(dir, name string) (Model, error) {
	models, err := ListDir(dir)
	if err != nil {
		return Model{}, err
	}
	m, err := Find(models, name)
	if err != nil {
		return Model{}, err
	}
	if err := os.Remove(m.Path); err != nil {
		return Model{}, fmt.Errorf("remove model %s: %w", m.Name, err)
	}
	// An interrupted download of the same file would otherwise be resumed
	// by the next pull; after rm the user expects a clean slate.
	for _, side := range []string{".partial", ".partial.etag"} {
		_ = os.Remove(m.Path + side)
	}
	root := absOr(dir)
	for d := filepath.Dir(m.Path); d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
		if os.Remove(d) != nil { // not empty (or not ours): stop climbing
			break
		}
	}
	return m, nil
}
