package ui

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"

	"vkchat/ui/inspector"
	"vkchat/ui/sampler"
)

const (
	keysBegin = "<!-- keys: generated from ui/keytable.go; TestREADMEKeyTable checks it -->"
	keysEnd   = "<!-- /keys -->"
)

// readmeKeyTable is the README's key table as the key reference gives it:
// a Markdown table with a row per section heading and one per key.
func readmeKeyTable(k KeyMap) string {
	return readmeTable(k.reference(sampler.DefaultKeyMap(), inspector.DefaultKeyMap()))
}

func readmeTable(sections []keySection) string {
	var b strings.Builder
	b.WriteString("| Key | What it does |\n|---|---|\n")
	for _, s := range sections {
		b.WriteString("| **" + s.Title + "** | |\n")
		for _, kb := range s.Keys {
			h := kb.Help()
			b.WriteString("| `" + strings.ReplaceAll(h.Key, "|", `\|`) + "` | " + strings.ReplaceAll(h.Desc, "|", `\|`) + " |\n")
		}
	}
	return b.String()
}

// TestREADMEKeyTable: README's key table is F1's key reference, entry for
// entry. When a key is added, paste the table this test prints.
func TestREADMEKeyTable(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i, j := strings.Index(readme, keysBegin), strings.Index(readme, keysEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no key table between %q and %q", keysBegin, keysEnd)
	}
	got := strings.TrimSpace(readme[i+len(keysBegin) : j])
	want := strings.TrimSpace(readmeKeyTable(DefaultKeyMap()))
	if got != want {
		t.Errorf("README's key table differs from F1's; replace it with:\n%s\n%s\n%s", keysBegin, want, keysEnd)
	}
}

// TestHelpListsEveryKeyAtEveryWidth: F1 lists every key of the reference,
// at 80 columns as at 200, scrolling where it is taller than the window.
func TestHelpListsEveryKeyAtEveryWidth(t *testing.T) {
	for _, w := range []int{80, 100, 200} {
		m := newTestModel(t, newFakeEngine(), Config{})
		h := newHarness(t, m)
		h.size(w, 24)
		h.key("f1")
		var seen strings.Builder
		for range 30 {
			seen.WriteString(m.View())
			h.key("pgdown")
		}
		for _, s := range m.keys.reference(m.smp.Keys, m.inspKeys) {
			for _, kb := range s.Keys {
				if k := kb.Help().Key; !strings.Contains(seen.String(), "  "+k+" ") {
					t.Errorf("%d columns: F1 does not list %q (%s)", w, k, kb.Help().Desc)
				}
			}
		}
		for _, k := range []string{"tab", "←/→", "↑/↓", "enter", "[/]", "h", "s", "ctrl+v", "alt+backspace", "ctrl+c", "f2", "ctrl+l"} {
			if !strings.Contains(seen.String(), "  "+k+" ") {
				t.Errorf("%d columns: F1 does not list %q", w, k)
			}
		}
	}
}

// TestReferenceHasEveryKey: every binding of KeyMap that has help text
// is in the key reference, so a new key cannot be left out of F1 and the
// README.
func TestReferenceHasEveryKey(t *testing.T) {
	k := DefaultKeyMap()
	listed := map[string]bool{}
	for _, s := range k.reference(sampler.DefaultKeyMap(), inspector.DefaultKeyMap()) {
		for _, b := range s.Keys {
			listed[b.Help().Key+"\x00"+b.Help().Desc] = true
		}
	}
	// Every component's key map: the chat's, the sampler's, the inspector's.
	for _, km := range []any{k, sampler.DefaultKeyMap(), inspector.DefaultKeyMap()} {
		v := reflect.ValueOf(km)
		for i := range v.NumField() {
			b, ok := v.Field(i).Interface().(key.Binding)
			if !ok || b.Help().Key == "" {
				continue
			}
			if !listed[b.Help().Key+"\x00"+b.Help().Desc] {
				t.Errorf("%s.%s (%s: %s) is not in reference()", v.Type(), v.Type().Field(i).Name, b.Help().Key, b.Help().Desc)
			}
		}
	}
}
