package conversation

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
)

// A file that loads can be saved again. 20 MiB of "<" (a chat about HTML
// or code) loads, but encoding/json's default escapes made it 120 MiB
// (\u003c), over MaxFileBytes, so every save of it failed; and a long chat
// of short turns, loaded from a compact file near the limit, took more
// than the limit once indented. Both are written now, and read back the
// same.
func TestSaveWhatLoads(t *testing.T) {
	dir := t.TempDir()
	angles := strings.Repeat("<", 20<<20)
	var short bytes.Buffer
	short.WriteString(`{"version":1,"messages":[`)
	for i := 0; short.Len() < MaxFileBytes-(1<<20); i++ {
		if i > 0 {
			short.WriteByte(',')
		}
		short.WriteString(`{"role":"user","content":"hi"}`)
	}
	short.WriteString("]}\n")
	for name, body := range map[string][]byte{
		"angles": []byte(`{"version":1,"messages":[{"role":"user","content":"` + angles + `"}]}`),
		"short":  short.Bytes(),
	} {
		in := filepath.Join(dir, name+".json")
		if err := os.WriteFile(in, body, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Read(in, sample.Defaults())
		if err != nil {
			t.Fatalf("%s: the file does not load: %v", name, err)
		}
		out := filepath.Join(dir, name+"-saved.json")
		if err := Write(out, c); err != nil {
			t.Fatalf("%s: a %.1f MiB file loads but does not save: %v", name, float64(len(body))/(1<<20), err)
		}
		back, err := Read(out, sample.Defaults())
		if err != nil {
			t.Fatalf("%s: the saved file does not load: %v", name, err)
		}
		if len(back.Messages) != len(c.Messages) || back.Messages[0].Content != c.Messages[0].Content {
			t.Fatalf("%s: %d messages read back, want %d", name, len(back.Messages), len(c.Messages))
		}
		st, _ := os.Stat(out)
		t.Logf("%s: %d bytes loaded, %d saved", name, len(body), st.Size())
	}
}

// A conversation too large to save (a chat that grew past MaxFileBytes)
// ends the session in a rescue file, whatever its size, and nothing of it
// is printed: it used to go to the terminal as JSON, 84 MiB of it.
// Printing is left for a small conversation with nowhere to be written.
func TestRescueNeverFloodsTheTerminal(t *testing.T) {
	c := New(false, "")
	c.Append(&Turn{Role: chat.RoleUser, Content: strings.Repeat("<p>", (MaxFileBytes>>2)/3)},
		&Turn{Role: chat.RoleAssistant, Content: strings.Repeat("x", MaxFileBytes-(MaxFileBytes>>2)+100)})
	var out bytes.Buffer
	s := &Saver{RescueDir: t.TempDir(), RescueOut: &out, FirstDelay: time.Hour}
	res := s.Autosave(c, t.TempDir(), Meta{}, time.Now)
	if !errors.Is(res.Err, ErrTooLarge) {
		t.Fatalf("autosave of %d MiB: %v, want ErrTooLarge", MaxFileBytes>>20, res.Err)
	}
	err := s.Rescue(c, Meta{}, time.Now())
	files, _ := filepath.Glob(filepath.Join(s.RescueDir, "vkchat-unsaved-*.json"))
	if out.Len() != 0 {
		t.Fatalf("rescue printed %d bytes: %.200s", out.Len(), out.String())
	}
	if len(files) != 1 || err == nil || !strings.Contains(err.Error(), files[0]) {
		t.Fatalf("rescue: %v, files %v; want one file, named", err, files)
	}
	data, rerr := os.ReadFile(files[0])
	if rerr != nil || !bytes.Contains(data, []byte("<p><p>")) || len(data) < MaxFileBytes {
		t.Fatalf("rescue file: %v, %d bytes", rerr, len(data))
	}

	// Nowhere to write: too large to print, and the error says so.
	s.RescueDir = filepath.Join(files[0], "not-a-dir")
	err = s.Rescue(c, Meta{}, time.Now())
	if out.Len() != 0 || err == nil || !strings.Contains(err.Error(), "too large to print") {
		t.Fatalf("rescue with nowhere to write: %v, printed %d bytes", err, out.Len())
	}
}
