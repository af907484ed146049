package ui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine/trace"
	"vkchat/runtime/sample"
)

// conversationVersion is the save format; loading a newer one is refused
// rather than half-understood.
const conversationVersion = 1

// maxConversationBytes bounds what /load reads, so pointing it at a wrong,
// huge file fails quickly instead of filling memory.
const maxConversationBytes = 64 << 20

// savedConversation is the JSON file a conversation is kept in. Messages
// are the whole conversation as the engine gets it, system prompt first.
type savedConversation struct {
	Version    int            `json:"version"`
	Model      string         `json:"model"`
	ModelName  string         `json:"model_name,omitempty"`
	Completion bool           `json:"completion,omitempty"`
	Params     savedParams    `json:"params"`
	Messages   []chat.Message `json:"messages"`
	// Tree holds the branches of a conversation that has some (see
	// persist_tree.go); Messages is then the branch on screen.
	Tree    []savedNode `json:"tree,omitempty"`
	Created time.Time   `json:"created"`
	Updated time.Time   `json:"updated"`
}

// savedParams is the export's named sampler settings (the same JSON keys):
// the file format does not change when sample.Params gains or renames a
// field, and keys missing from a file keep the current value.
type savedParams = trace.Params

// writeConversation replaces path atomically: the data goes to a temporary
// file in the same directory, is synced, then renamed over path, so a crash
// leaves either the old file or the new one, never half of one.
func writeConversation(path string, c savedConversation) (err error) {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
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
	if _, err = f.Write(append(data, '\n')); err != nil {
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

// readConversation reads and checks a saved conversation; params start
// from base so a file without some settings keeps the current ones.
func readConversation(path string, base sample.Params) (savedConversation, error) {
	f, err := os.Open(path)
	if err != nil {
		return savedConversation{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConversationBytes+1))
	if err != nil {
		return savedConversation{}, err
	}
	if len(data) > maxConversationBytes {
		return savedConversation{}, fmt.Errorf("%s: larger than %d MiB, not a conversation file", path, maxConversationBytes>>20)
	}
	c := savedConversation{Params: trace.ParamsOf(base)}
	if err := json.Unmarshal(data, &c); err != nil {
		return savedConversation{}, fmt.Errorf("%s: not a conversation file: %w", path, err)
	}
	if c.Version > conversationVersion {
		return savedConversation{}, fmt.Errorf("%s: saved by a newer vkchat (format %d, this one reads %d)", path, c.Version, conversationVersion)
	}
	for i, msg := range c.Messages {
		switch msg.Role {
		case chat.RoleUser, chat.RoleAssistant:
		case chat.RoleSystem:
			if i != 0 {
				return savedConversation{}, fmt.Errorf("%s: message %d: a system message may only come first", path, i+1)
			}
		default:
			return savedConversation{}, fmt.Errorf("%s: message %d: unknown role %q", path, i+1, msg.Role)
		}
	}
	if err := checkTree(c.Tree); err != nil {
		return savedConversation{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// snapshot is the conversation as it stands, the partial reply included.
func (m *Model) snapshot() savedConversation {
	now := m.now()
	if m.created.IsZero() {
		m.created = now
	}
	return savedConversation{
		Version:    conversationVersion,
		Model:      m.info.Path,
		ModelName:  m.info.Name,
		Completion: m.info.Completion,
		Params:     trace.ParamsOf(m.params),
		Messages:   m.messages(true),
		Tree:       m.saveTree(),
		Created:    m.created,
		Updated:    now,
	}
}

// newSavePath picks a fresh file name in the state dir for this chat.
func (m *Model) newSavePath() string {
	dir := m.cfg.conversationsDir()
	base := m.now().Format("2006-01-02T15-04-05")
	p := filepath.Join(dir, base+".json")
	// Only an existing file means "try the next name"; any other error
	// (an unusable state dir) is left for the write to report.
	for i := 2; i < 1000; i++ {
		if _, err := os.Stat(p); err != nil {
			return p
		}
		p = filepath.Join(dir, fmt.Sprintf("%s-%d.json", base, i))
	}
	return p
}

// autosave writes the conversation to its file; it runs after every turn,
// on errors and on quit. An empty chat is not written. When the write fails
// (a full disk, a state dir gone read-only) the conversation stays in
// memory, the status line says so, and the save is tried again on a timer
// and at the next turn until it goes through.
func (m *Model) autosave() {
	if len(m.messages(true)) == 0 || (len(m.turns) == 0 && m.savePath == "") {
		return
	}
	if m.savePath == "" {
		m.savePath = m.newSavePath()
	}
	r := &m.saveRetry
	if err := r.writer()(m.savePath, m.snapshot()); err != nil {
		m.saveErr = err
		r.failures++
		if r.delay == 0 {
			r.delay = cmp.Or(r.firstDelay, saveRetryFirst)
		}
		if !r.pending {
			r.armed = true
		}
		m.setError(fmt.Sprintf("could not save the conversation (kept in memory, retrying in %s): %v", r.delay, err))
		return
	}
	if m.saveErr != nil {
		m.setStatus(fmt.Sprintf("saved to %s after %d failed attempts", m.savePath, r.failures))
	}
	m.saveErr = nil
	r.failures, r.delay, r.armed = 0, 0, false
	r.seq++ // a timer still pending finds nothing to do
	r.pending = false
}

// Retry timing after a failed save: soon at first, then backing off so a
// disk that stays full is not hammered.
const (
	saveRetryFirst = 2 * time.Second
	saveRetryMax   = 30 * time.Second
)

// saveRetryState is the autosave's failure state.
type saveRetryState struct {
	// write saves a conversation; nil means writeConversation. Tests put
	// faults here (a full disk, a failing rename).
	write      func(path string, c savedConversation) error
	firstDelay time.Duration // 0: saveRetryFirst (tests shorten it)
	failures   int           // consecutive failed saves
	delay      time.Duration // wait before the next retry; 0 while saves succeed
	armed      bool          // a retry timer is due to be started
	pending    bool          // a retry timer is running
	seq        int           // tells the running timer from abandoned ones
	// rescueDir is where Run writes a conversation it could not save
	// (empty: os.TempDir()); rescueOut gets it as JSON when even that
	// fails (nil: os.Stderr).
	rescueDir string
	rescueOut io.Writer
}

func (r *saveRetryState) writer() func(string, savedConversation) error {
	if r.write != nil {
		return r.write
	}
	return writeConversation
}

// saveRetryMsg is a retry timer going off.
type saveRetryMsg struct{ seq int }

// takeSaveRetry starts the retry timer a failed save asked for, if any;
// Update hands the command to bubbletea.
func (m *Model) takeSaveRetry() tea.Cmd {
	r := &m.saveRetry
	if !r.armed {
		return nil
	}
	r.armed, r.pending = false, true
	r.seq++
	seq, d := r.seq, r.delay
	r.delay = min(2*r.delay, saveRetryMax)
	return tea.Tick(d, func(time.Time) tea.Msg { return saveRetryMsg{seq: seq} })
}

func (m *Model) handleSaveRetry(msg saveRetryMsg) {
	r := &m.saveRetry
	if msg.seq != r.seq || m.saveErr == nil {
		return
	}
	r.pending = false
	m.autosave()
}

// rescueUnsaved runs when the chat ends with the last save failed: the
// conversation goes to a file in the temp dir (another disk, often), and
// when that fails too, to stderr as JSON, so the terminal's scrollback
// still holds it. The error says where it went.
func (m *Model) rescueUnsaved() error {
	if m.saveErr == nil {
		return nil
	}
	r := &m.saveRetry
	c := m.snapshot()
	dir := r.rescueDir
	if dir == "" {
		dir = os.TempDir()
	}
	p := filepath.Join(dir, "vkchat-unsaved-"+m.now().Format("2006-01-02T15-04-05")+".json")
	werr := r.writer()(p, c)
	if werr == nil {
		return fmt.Errorf("ui: saving the conversation to %s: %w; saved it to %s instead", m.savePath, m.saveErr, p)
	}
	out := r.rescueOut
	if out == nil {
		out = os.Stderr
	}
	data, _ := json.MarshalIndent(c, "", "  ")
	fmt.Fprintf(out, "vkchat: the conversation could not be saved (%v; %v); here it is as JSON:\n%s\n", m.saveErr, werr, data)
	return fmt.Errorf("ui: saving the conversation to %s: %w (also failed in %s: %v; printed above as JSON)", m.savePath, m.saveErr, dir, werr)
}

// saveCopy writes the conversation to a file the user named.
func (m *Model) saveCopy(path string) error {
	return m.saveRetry.writer()(expandHome(path), m.snapshot())
}

// resolveConversation finds a file to load: the path as given, else a name
// in the state dir (with or without ".json").
func (m *Model) resolveConversation(name string) string {
	p := expandHome(name)
	if _, err := os.Stat(p); err == nil || filepath.IsAbs(p) {
		return p
	}
	dir := m.cfg.conversationsDir()
	for _, c := range []string{filepath.Join(dir, p), filepath.Join(dir, p+".json")} {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return p
}

// loadConversation replaces the chat with a saved one. Later turns are
// saved back to the same file, so resuming continues it.
func (m *Model) loadConversation(name string) error {
	path := m.resolveConversation(name)
	c, err := readConversation(path, m.params)
	if err != nil {
		return err
	}
	m.detachGeneration()
	m.resetChat()
	msgs := c.Messages
	if len(msgs) > 0 && msgs[0].Role == chat.RoleSystem {
		m.system = msgs[0].Content
		msgs = msgs[1:]
	} else {
		m.system = ""
	}
	for _, msg := range msgs {
		t := &turn{role: msg.Role, content: msg.Content}
		t.splitLoaded()
		m.turns = append(m.turns, t)
	}
	if len(c.Tree) > 0 {
		// Checked by readConversation, so it cannot fail here.
		if turns, err := treeTurns(c.Tree); err == nil {
			m.turns = turns
		}
	}
	m.setParams(c.Params.Sample())
	m.savePath = path
	m.created = c.Created
	if c.Model != "" && m.info.Path != "" && c.Model != m.info.Path {
		m.setStatus(fmt.Sprintf("loaded %s (saved with %s)", filepath.Base(path), c.Model))
	} else {
		m.setStatus("loaded " + path)
	}
	return nil
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
