// Package demo is the model vkchat carries inside its binary, so a first
// run without network (a plane, a locked-down machine, CI) still has
// something to chat with: stories260K, a 260K-parameter Llama trained on
// TinyStories (MIT, Karpathy's tinyllamas; see NOTICE). It writes short
// children's stories, not chat replies.
//
// The embedded bytes are written once to the user's cache directory and
// opened from there like any model file. The alternative, reading GGUF from
// the byte slice, would give the demo a code path of its own through the
// engine (which loads by path: the GGUF reader memory-maps the file, the
// Vulkan backend uploads from that mapping, saved conversations record the
// path); 1.1 MB written once costs a millisecond and keeps one path for
// every model.
package demo

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

//go:embed stories260K.gguf
var model []byte

// Ref is the model reference that names the demo (vkchat chat --model demo).
const Ref = "demo"

// FileName is the embedded file's name.
const FileName = "stories260K.gguf"

// Summary says in a few words what the demo model is.
const Summary = "stories260K, a 260K-parameter model that writes tiny stories (not a chat model)"

// IsRef reports whether a --model value names the demo. A file that
// happens to be called "demo" is still reachable as ./demo.
func IsRef(s string) bool { return strings.EqualFold(strings.TrimSpace(s), Ref) }

// Bytes returns the embedded GGUF file. The slice must not be modified.
func Bytes() []byte { return model }

// Sum is the hex SHA-256 of the embedded file.
func Sum() string {
	h := sha256.Sum256(model)
	return hex.EncodeToString(h[:])
}

// Dir is where Path writes the model: $XDG_CACHE_HOME/vkchat/demo, else
// ~/.cache/vkchat/demo. It is beside the model store, not in it, so the
// demo never shows up as a downloaded model (an empty store still gets the
// first-run download offer).
func Dir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "vkchat", "demo")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".cache", "vkchat", "demo")
	}
	return ""
}

// Path returns the path of the demo model on disk, writing it to Dir (or,
// when that cannot be written, a per-user temporary directory) the first
// time. A file already there is used only if its bytes are the embedded
// ones, so an older or damaged copy is replaced.
func Path() (string, error) {
	var errs []error
	for _, dir := range candidateDirs() {
		p, err := PathIn(dir)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("demo model: %w", errors.Join(errs...))
}

func candidateDirs() []string {
	var dirs []string
	if d := Dir(); d != "" {
		dirs = append(dirs, d)
	}
	return append(dirs, filepath.Join(os.TempDir(), fmt.Sprintf("vkchat-demo-%d", os.Getuid())))
}

// PathIn writes the model into dir (if it is not there already) and
// returns its path. The name carries the first bytes of the hash, so a
// newer binary with another demo does not fight over one file.
func PathIn(dir string) (string, error) {
	p := filepath.Join(dir, strings.TrimSuffix(FileName, ".gguf")+"-"+Sum()[:12]+".gguf")
	if same(p) {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	// Write aside and rename, so a concurrent vkchat or a crash never
	// leaves a half-written model where the next run would map it.
	f, err := os.CreateTemp(dir, "."+FileName+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("write the demo model in %s: %w", dir, err)
	}
	tmp := f.Name()
	_, werr := f.Write(model)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, p)
	}
	if werr != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write the demo model to %s: %w", p, werr)
	}
	return p, nil
}

// same reports whether p holds exactly the embedded model.
func same(p string) bool {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(model)) {
		return false
	}
	data, err := os.ReadFile(p)
	return err == nil && bytes.Equal(data, model)
}
