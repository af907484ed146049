package conversation

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"

	"vkchat/runtime/engine/trace"

	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
)

// Version is the newest save format this vkchat reads; loading a newer one
// is refused rather than half-understood. A file is written as format 1
// (what an older vkchat reads) unless it needs the flat branch tree
// ("nodes"), which is format 2.
const Version = 2

// MaxFileBytes bounds what Read reads, so pointing /load at a wrong, huge
// file fails quickly instead of filling memory. Write holds itself to the
// same bound, and its encoding is never longer than a file it read (no
// HTML escapes, compact when the indented form would not fit), so a
// conversation that loads can be saved again.
const MaxFileBytes = 64 << 20

// ErrTooLarge is Write refusing a conversation over MaxFileBytes.
var ErrTooLarge = errors.New("too large for a conversation file")

// marshal is json.Marshal without the HTML escapes: "<" as \u003c is six
// bytes for one, so a conversation about HTML or code read from a file
// near MaxFileBytes would encode to far more than it (a 60 MB file, 84
// MiB), and could never be saved again. indent "" is the compact form.
func marshal(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// File is the JSON file a conversation is kept in. Messages are the whole
// conversation as the engine gets it, system prompt first.
type File struct {
	Version    int            `json:"version"`
	Model      string         `json:"model"`
	ModelName  string         `json:"model_name,omitempty"`
	Completion bool           `json:"completion,omitempty"`
	Params     savedParams    `json:"params"`
	Messages   []chat.Message `json:"messages"`
	// Nodes holds the branches of a conversation that has some (format 2,
	// see persist_tree.go); Messages is then the branch on screen.
	Nodes []savedTurn `json:"nodes,omitempty"`
	// Tree is format 1's nested tree: read, never written.
	Tree    []savedNode `json:"tree,omitempty"`
	Created time.Time   `json:"created"`
	Updated time.Time   `json:"updated"`

	// Extra is the top-level fields this vkchat does not know (a newer
	// one's, a tool's), written back unchanged so that loading a file and
	// saving it loses nothing.
	Extra map[string]json.RawMessage `json:"-"`
}

// fileFields is File without its JSON methods.
type fileFields File

// knownFields is the top-level keys File itself reads and writes.
var knownFields = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[fileFields]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = true
		}
	}
	return m
}()

// MarshalJSON writes the known fields, then the unknown ones kept from the
// file this one was loaded from.
func (f File) MarshalJSON() ([]byte, error) {
	data, err := marshal(fileFields(f), "")
	if err != nil || len(f.Extra) == 0 {
		return data, err
	}
	keys := make([]string, 0, len(f.Extra))
	for k := range f.Extra {
		if !knownFields[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	buf := bytes.NewBuffer(data[:len(data)-1]) // without the closing brace
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(f.Extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads the known fields over f's (so defaults set before
// stay where the file says nothing) and keeps the others in Extra.
func (f *File) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, (*fileFields)(f)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	f.Extra = nil
	for k, v := range all {
		if knownFields[k] {
			continue
		}
		if f.Extra == nil {
			f.Extra = map[string]json.RawMessage{}
		}
		f.Extra[k] = v
	}
	return nil
}

// savedParams is the export's named sampler settings (the same JSON keys):
// the file format does not change when sample.Params gains or renames a
// field, and keys missing from a file keep the current value.
type savedParams = trace.Params

// Meta is what a save file says about the session beside the chat itself:
// the model it was had with and the sampler settings in use.
type Meta struct {
	Model, ModelName string
	Params           sample.Params
}

// Write replaces path atomically: the data goes to a temporary file in the
// same directory, is synced, then renamed over path, so a crash leaves
// either the old file or the new one, never half of one.
// A conversation the loader would refuse (too large, or not valid) is
// not written: the error says why, and the old file stays.
func Write(path string, c File) (err error) {
	if err := c.check(); err != nil {
		return fmt.Errorf("%s: not saved, the file would not load: %w", path, err)
	}
	// The text alone over the limit is refused before encoding it.
	text := 0
	for _, m := range c.Messages {
		text += len(m.Content)
	}
	for _, n := range c.Nodes {
		text += len(n.Content)
	}
	if text > MaxFileBytes {
		return fmt.Errorf("%s: not saved, the conversation holds %.1f MiB of text and a conversation file may hold %d MiB (/save a shorter branch or start a new chat): %w",
			path, float64(text)/(1<<20), MaxFileBytes>>20, ErrTooLarge)
	}
	data, err := Encode(c)
	if err != nil {
		return err
	}
	if len(data) > MaxFileBytes {
		return fmt.Errorf("%s: not saved, the conversation takes %.1f MiB and a conversation file may hold %d MiB (/save a shorter branch or start a new chat): %w",
			path, float64(len(data))/(1<<20), MaxFileBytes>>20, ErrTooLarge)
	}
	return writeAtomic(path, data)
}

// Encode is c as Write writes it, newline included: indented for reading,
// or compact when indenting would take it over MaxFileBytes (a long chat
// of short turns, loaded from a compact file, must fit again).
func Encode(c File) ([]byte, error) {
	data, err := marshal(c, "  ")
	if err != nil {
		return nil, err
	}
	if len(data)+1 > MaxFileBytes {
		if data, err = marshal(c, ""); err != nil {
			return nil, err
		}
	}
	return append(data, '\n'), nil
}

// writeAtomic is Write's way of replacing a file: a temporary file in the
// same directory, synced, then renamed over path.
func writeAtomic(path string, data []byte) (err error) {
	if err := checkTarget(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// checkTarget refuses to replace what is not a regular file: the rename
// that makes a write atomic would put a regular file in the place of a
// named pipe a script reads from, or of a device node (/dev/null), and a
// directory cannot be replaced at all. A path that does not exist yet is
// fine, and so is a link to a regular file.
func checkTarget(path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() {
		return nil // a new file; or one the write's own error will name
	}
	return fmt.Errorf("%s is %s, not a regular file: not replaced (name a new file or a conversation file)", path, fileKind(st.Mode()))
}

// fileKind names what a non-regular file is, for an error.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file (" + m.Type().String() + ")"
}

// Read reads and checks a saved conversation; params start from base so a
// file without some settings keeps the current ones.
func Read(path string, base sample.Params) (File, error) {
	// O_NONBLOCK: opening a FIFO would otherwise wait for a writer before
	// the check below could refuse it; a regular file reads as usual.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return File{}, err
	} else if !st.Mode().IsRegular() {
		// A FIFO or a device (/dev/zero) would block or never end.
		return File{}, fmt.Errorf("%s: not a regular file (%s), not a conversation file", path, st.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return File{}, err
	}
	if len(data) > MaxFileBytes {
		return File{}, fmt.Errorf("%s: larger than %d MiB, not a conversation file", path, MaxFileBytes>>20)
	}
	c := File{Params: trace.ParamsOf(base)}
	if err := json.Unmarshal(data, &c); err != nil {
		return File{}, fmt.Errorf("%s: not a conversation file: %w", path, err)
	}
	if err := c.check(); err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// check is what Read requires of a file, and Write of what it writes.
func (c *File) check() error {
	if c.Version > Version {
		return fmt.Errorf("saved by a newer vkchat (format %d, this one reads %d)", c.Version, Version)
	}
	// the ranges /temp and the other commands hold a user to
	if err := c.Params.Sample().Check(); err != nil {
		return fmt.Errorf("field \"params\": %w", err)
	}
	for i, msg := range c.Messages {
		switch msg.Role {
		case chat.RoleUser, chat.RoleAssistant:
		case chat.RoleSystem:
			if i != 0 {
				return fmt.Errorf("message %d: a system message may only come first", i+1)
			}
		default:
			return fmt.Errorf("message %d: unknown role %q", i+1, msg.Role)
		}
	}
	if len(c.Nodes) > 0 {
		_, err := checkNodes(c.Nodes)
		return err
	}
	return checkTree(c.Tree)
}

// Snapshot is the conversation as it stands, the partial reply included.
func (c *Conversation) Snapshot(meta Meta, now time.Time) File {
	if c.created.IsZero() {
		c.created = now
	}
	f := File{
		Version:    1,
		Model:      meta.Model,
		ModelName:  meta.ModelName,
		Completion: c.completion,
		Params:     trace.ParamsOf(meta.Params),
		Messages:   c.Messages(true),
		Nodes:      c.saveNodes(),
		Created:    c.created,
		Updated:    now,
		Extra:      c.extra,
	}
	if f.Messages == nil {
		f.Messages = []chat.Message{} // "messages": [], never null
	}
	if len(f.Nodes) > 0 {
		f.Version = 2
	}
	return f
}

// Load replaces the conversation with a saved one (f, read from path).
// Later turns are saved back to the same file, so resuming continues it.
// The settings in f.Params are the caller's to apply.
func (c *Conversation) Load(f File, path string) {
	c.Reset()
	msgs := f.Messages
	if len(msgs) > 0 && msgs[0].Role == chat.RoleSystem {
		c.system = msgs[0].Content
		msgs = msgs[1:]
	} else {
		c.system = ""
	}
	for _, msg := range msgs {
		t := &Turn{Role: msg.Role, Content: msg.Content}
		t.SplitLoaded()
		c.turns = append(c.turns, t)
	}
	// The trees were checked by Read, so they cannot fail here.
	if len(f.Nodes) > 0 {
		if nt, err := checkNodes(f.Nodes); err == nil {
			c.turns = nt.turns()
		}
	} else if len(f.Tree) > 0 {
		if turns, err := treeTurns(f.Tree); err == nil {
			c.turns = turns
		}
	}
	c.path = path
	c.created = f.Created
	c.extra = f.Extra
}

// loadedCopy is where a conversation loaded from outside the chats store
// came from, and what it said then (a digest of what a save would write).
// The file itself is the user's and is never written back unasked; the
// chat becomes a new one in the store the first time it changes.
type loadedCopy struct {
	path string
	sum  [sha256.Size]byte
}

// LoadCopy is Load for a file outside the chats store (/load ./notes.json):
// the conversation is shown as the file has it, but saves go to a new file
// in the store (Autosave picks one), and only once the chat changes, so
// opening a file to read it leaves no copy behind. The file keeps its
// format, its hand edits and its place; /save PATH writes to it on
// request.
func (c *Conversation) LoadCopy(f File, from string) {
	c.Load(f, "")
	c.origin = loadedCopy{path: from, sum: c.contentSum()}
}

// LoadedFrom is the file LoadCopy read, while the chat has not been saved
// to the store yet; "" otherwise.
func (c *Conversation) LoadedFrom() string {
	if c.path != "" {
		return ""
	}
	return c.origin.path
}

// contentSum digests what a save would write of the chat itself (the
// settings and times left out).
func (c *Conversation) contentSum() [sha256.Size]byte {
	data, _ := marshal(struct {
		Completion bool
		Messages   []chat.Message
		Nodes      []savedTurn
	}{c.completion, c.Messages(true), c.saveNodes()}, "")
	return sha256.Sum256(data)
}

// unchangedCopy reports whether c is a LoadCopy not yet saved to the store
// and still as it was loaded.
func (c *Conversation) unchangedCopy() bool {
	return c.path == "" && c.origin.path != "" && c.contentSum() == c.origin.sum
}

// InDir reports whether path is a file directly in dir (the chats store),
// comparing absolute, cleaned paths.
func InDir(path, dir string) bool {
	ap, err1 := filepath.Abs(path)
	ad, err2 := filepath.Abs(dir)
	return err1 == nil && err2 == nil && filepath.Dir(ap) == filepath.Clean(ad)
}

// CreateSavePath claims a fresh file name in dir for a chat saved at now:
// the file is created empty with O_EXCL, so two chats saving in the same
// second (in one vkchat or two) never get the same one. The caller writes
// it (Write replaces it) or removes it.
func CreateSavePath(dir string, now time.Time) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	base := now.Format("2006-01-02T15-04-05")
	p := filepath.Join(dir, base+".json")
	for i := 2; i <= 10000; i++ {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return p, f.Close()
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		p = filepath.Join(dir, fmt.Sprintf("%s-%d.json", base, i))
	}
	return "", fmt.Errorf("%s: no free file name for a chat saved at %s", dir, base)
}

// StaleTemp is how old a temporary file of Write's must be for CleanTemp
// to take it for one a crash left behind.
const StaleTemp = time.Hour

// CleanTemp removes the temporary files (".NAME.NNN.tmp") that writes
// killed midway left in dir, those older than StaleTemp at now; a write
// in progress (another vkchat's) is newer and stays. It returns how many
// it removed.
func CleanTemp(dir string, now time.Time) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") || !strings.Contains(name, ".json.") {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < StaleTemp {
			continue
		}
		if os.Remove(filepath.Join(dir, name)) == nil {
			n++
		}
	}
	return n
}

// The one rule for the names /save and /load take: a bare name ("mychat",
// "notes.md") is a file in the conversations directory, and one without
// an extension gets ".json"; anything with a directory in it ("./x.json",
// "~/chats/x", an absolute path) is that path. IsBareName tells them apart.
func IsBareName(name string) bool {
	return name != "" && !strings.ContainsRune(name, '/') && !strings.ContainsRune(name, filepath.Separator) &&
		name != "." && name != ".." && !strings.HasPrefix(name, "~")
}

// SavePath is where /save NAME writes, by the rule above.
func SavePath(name, dir string) string {
	if !IsBareName(name) {
		return ExpandHome(name)
	}
	if filepath.Ext(name) == "" {
		name += ".json"
	}
	return filepath.Join(dir, name)
}

// Resolve finds the file /load NAME means, by the same rule: a bare name
// in dir, as given or with ".json"; then, so a file named before the rule
// still opens, a bare name in the working directory.
func Resolve(name, dir string) string {
	if !IsBareName(name) {
		return ExpandHome(name)
	}
	for _, c := range []string{filepath.Join(dir, name), filepath.Join(dir, name+".json")} {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	if st, err := os.Stat(name); err == nil && st.Mode().IsRegular() {
		return name
	}
	return SavePath(name, dir)
}

// ExpandHome expands a leading "~" to the home directory.
func ExpandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// Retry timing after a failed save: soon at first, then backing off so a
// disk that stays full is not hammered.
const (
	RetryFirst = 2 * time.Second
	RetryMax   = 30 * time.Second
)

// Saver writes a conversation to its file after every turn and keeps what
// a failed save leaves to do: when the write fails (a full disk, a state
// dir gone read-only) the conversation stays in memory and the save is
// tried again on a timer, and at the next turn, until it goes through.
// The timer itself is the caller's (TakeRetry says when); Saver is only
// the state, so it is tested without a clock.
type Saver struct {
	// Write saves a conversation; nil means Write. Tests put faults here
	// (a full disk, a failing rename).
	Write func(path string, c File) error
	// FirstDelay is the first retry's wait; 0 means RetryFirst (tests
	// shorten it).
	FirstDelay time.Duration
	// RescueDir is where Rescue writes a conversation it could not save
	// (empty: os.TempDir()); RescueOut gets it as JSON when even that
	// fails (nil: os.Stderr).
	RescueDir string
	RescueOut io.Writer

	err      error         // the last save's error; nil once one succeeds
	failures int           // consecutive failed saves
	delay    time.Duration // wait before the next retry; 0 while saves succeed
	armed    bool          // a retry timer is due to be started
	pending  bool          // a retry timer is running
	seq      int           // tells the running timer from abandoned ones
}

// SaveResult is what an autosave did, for the status line.
type SaveResult struct {
	Err       error         // the save failed; the conversation is kept in memory
	RetryIn   time.Duration // with Err: when the next attempt is
	Recovered int           // a save went through after this many failures
}

func (s *Saver) writer() func(string, File) error {
	if s.Write != nil {
		return s.Write
	}
	return Write
}

// Err is the last save's error, nil when it went through.
func (s *Saver) Err() error { return s.err }

// Delay is how long the next retry will wait (it doubles up to RetryMax).
func (s *Saver) Delay() time.Duration { return s.delay }

// Autosave writes c to its file, choosing one in dir on the first save.
// An empty chat is not written.
func (s *Saver) Autosave(c *Conversation, dir string, meta Meta, now func() time.Time) SaveResult {
	if len(c.Messages(true)) == 0 || (len(c.turns) == 0 && c.path == "") || c.unchangedCopy() {
		return SaveResult{}
	}
	fresh := ""
	if c.path == "" {
		p, err := CreateSavePath(dir, now())
		if err != nil {
			return s.failed(err)
		}
		c.path, fresh = p, p
	}
	if err := s.writer()(c.path, c.Snapshot(meta, now())); err != nil {
		if fresh != "" {
			// The name claimed for this save goes back, empty: the next
			// attempt claims one again.
			os.Remove(fresh)
			c.path = ""
		}
		return s.failed(err)
	}
	var res SaveResult
	if s.err != nil {
		res.Recovered = s.failures
	}
	s.err = nil
	s.failures, s.delay, s.armed = 0, 0, false
	s.seq++ // a timer still pending finds nothing to do
	s.pending = false
	return res
}

// failed records a failed save and arms the retry.
func (s *Saver) failed(err error) SaveResult {
	s.err = err
	s.failures++
	if s.delay == 0 {
		s.delay = cmp.Or(s.FirstDelay, RetryFirst)
	}
	if !s.pending {
		s.armed = true
	}
	return SaveResult{Err: err, RetryIn: s.delay}
}

// TakeRetry hands over the retry timer a failed save asked for, if any:
// the caller starts a timer of d and, when it goes off, calls Retry(seq).
func (s *Saver) TakeRetry() (seq int, d time.Duration, ok bool) {
	if !s.armed {
		return 0, 0, false
	}
	s.armed, s.pending = false, true
	s.seq++
	seq, d = s.seq, s.delay
	s.delay = min(2*s.delay, RetryMax)
	return seq, d, true
}

// Retry reports whether the timer seq going off should save again: it is
// the latest one and the last save failed.
func (s *Saver) Retry(seq int) bool {
	if seq != s.seq || s.err == nil {
		return false
	}
	s.pending = false
	return true
}

// SaveCopy writes c to a file the user named.
func (s *Saver) SaveCopy(c *Conversation, path string, meta Meta, now time.Time) error {
	path = ExpandHome(path)
	if IsMarkdown(path) {
		return WriteMarkdown(path, c, meta, now)
	}
	return s.writer()(path, c.Snapshot(meta, now))
}

// Move writes c to a file the user named and makes it c's file, so later
// saves go there: the way out when saves to c's own file fail. A success
// ends the failed state.
func (s *Saver) Move(c *Conversation, path string, meta Meta, now time.Time) error {
	if err := s.writer()(path, c.Snapshot(meta, now)); err != nil {
		return err
	}
	c.path = path
	s.err = nil
	s.failures, s.delay, s.armed = 0, 0, false
	s.seq++
	s.pending = false
	return nil
}

// rescuePrintMax is the largest conversation Rescue prints when it can be
// written nowhere: a terminal's scrollback keeps that much, while tens of
// MiB of JSON would only flood it and scroll the conversation away anyway.
const rescuePrintMax = 256 << 10

// Rescue runs when the chat ends with the last save failed: the
// conversation goes to a file in the temp dir (another disk, often) or,
// failing that, the home directory, whatever its size (one over
// MaxFileBytes is written compact, for the user to split; /load refuses
// it). Only when no file can be written, and the conversation is small
// enough to be of use there, it is printed to RescueOut as JSON. The error
// says where it went; nil when nothing failed.
func (s *Saver) Rescue(c *Conversation, meta Meta, now time.Time) error {
	if s.err == nil {
		return nil
	}
	f := c.Snapshot(meta, now)
	dirs := []string{s.RescueDir}
	if s.RescueDir == "" {
		dirs[0] = os.TempDir()
		if home, err := os.UserHomeDir(); err == nil {
			dirs = append(dirs, home)
		}
	}
	name := "vkchat-unsaved-" + now.Format("2006-01-02T15-04-05") + ".json"
	var werrs []error
	for _, dir := range dirs {
		p := filepath.Join(dir, name)
		werr := s.writer()(p, f)
		if errors.Is(werr, ErrTooLarge) {
			data, err := marshal(f, "")
			if err == nil {
				err = writeAtomic(p, append(data, '\n'))
			}
			if err == nil {
				return fmt.Errorf("ui: saving the conversation to %s: %w; saved it to %s instead (%.1f MiB, over the %d MiB /load reads: split it to load it again)",
					c.path, s.err, p, float64(len(data)+1)/(1<<20), MaxFileBytes>>20)
			}
			werr = err
		}
		if werr == nil {
			return fmt.Errorf("ui: saving the conversation to %s: %w; saved it to %s instead", c.path, s.err, p)
		}
		werrs = append(werrs, werr)
	}
	werr := errors.Join(werrs...)
	data, err := marshal(f, "  ")
	if err != nil || len(data) > rescuePrintMax {
		return fmt.Errorf("ui: saving the conversation to %s: %w; writing it to %s failed too (%v), and at %.1f MiB it is too large to print",
			c.path, s.err, strings.Join(dirs, ", "), werr, float64(len(data))/(1<<20))
	}
	out := s.RescueOut
	if out == nil {
		out = os.Stderr
	}
	fmt.Fprintf(out, "vkchat: the conversation could not be saved (%v; %v); here it is as JSON:\n%s\n", s.err, werr, data)
	return fmt.Errorf("ui: saving the conversation to %s: %w (also failed in %s: %v; printed above as JSON)", c.path, s.err, strings.Join(dirs, ", "), werr)
}
