package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
)

// /load of a file outside the chats store never writes to that file: not
// on quit, not when the chat goes on (the old behaviour: rewritten in
// place on the next autosave, format 1 -> 2, hand edits to "messages"
// replaced by the branch tree's). Opening it only to read leaves nothing
// in the store; once the chat changes, it goes on as a new chat in the
// store, which /chats lists. A "messages" that the branch tree does not
// match is named on the status line.
func TestLoadLeavesTheUsersFileAlone(t *testing.T) {
	state := t.TempDir()
	outside := t.TempDir()
	plain := filepath.Join(outside, "notes.json")
	plainBody := "{\"version\": 1,\n \"messages\": [{\"role\": \"user\", \"content\": \"hi\"},\n   {\"role\": \"assistant\", \"content\": \"hello\"}]}\n"
	branched := filepath.Join(outside, "edited.json")
	branchedBody := `{"version": 2,
"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "EDITED by hand"}],
"nodes": [{"parent": -1, "role": "user", "content": "hi"},
  {"parent": 0, "role": "assistant", "content": "first"},
  {"parent": 0, "role": "assistant", "content": "second", "active": true}]}
`
	for p, body := range map[string]string{plain: plainBody, branched: branchedBody} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := newTestModel(t, newFakeEngine(), Config{StateDir: state})
	h := newHarness(t, m)
	h.size(100, 30)
	store := m.cfg.conversationsDir()
	unchanged := func(when string) {
		t.Helper()
		for p, body := range map[string]string{plain: plainBody, branched: branchedBody} {
			if got, err := os.ReadFile(p); err != nil || string(got) != body {
				t.Fatalf("%s: %s was rewritten (%v):\n%s", when, p, err, got)
			}
		}
	}
	stored := func() []conversation.Saved {
		t.Helper()
		list, err := conversation.ListSaved(store)
		if err != nil {
			t.Fatal(err)
		}
		return list
	}

	h.typeText("/load " + branched)
	h.key("enter")
	if !m.status.err || !strings.Contains(m.status.text, `"messages" differ`) || m.conv.Turns()[1].Content != "second" {
		t.Fatalf("/load of a hand-edited file: status %+v, reply %q", m.status, m.conv.Turns()[1].Content)
	}
	h.typeText("/load " + plain)
	h.key("enter")
	if m.status.err || !strings.Contains(m.status.text, "stays as it is") || len(m.conv.Turns()) != 2 {
		t.Fatalf("/load: status %+v, %d turns", m.status, len(m.conv.Turns()))
	}
	m.saver.Save() // what quitting does (shutdown), and /load and ctrl+n first
	unchanged("after loading and quitting")
	if list := stored(); len(list) != 0 {
		t.Fatalf("only reading a file left %d chats in the store: %+v", len(list), list)
	}

	h.say("and more")
	unchanged("after the chat went on")
	list := stored()
	if len(list) != 1 || list[0].Turns != 4 || m.conv.Path() != list[0].Path {
		t.Fatalf("store after the chat went on: %+v; chat saved in %q", list, m.conv.Path())
	}
	c, err := conversation.Read(list[0].Path, sample.Defaults())
	if err != nil || c.Messages[0].Content != "hi" || c.Messages[3].Content != m.conv.Turns()[3].Content {
		t.Fatalf("the store's copy: %v, %+v", err, c.Messages)
	}
}
