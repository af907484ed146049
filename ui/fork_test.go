package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
)

// forkSecondStep inspects the first reply, moves to its third step, picks
// the next candidate down and forks with it; it returns the reply forked
// from, the step and the forced token.
func forkSecondStep(t *testing.T, h *harness, eng *fakeEngine) (*conversation.Turn, int, int32) {
	t.Helper()
	m := h.m
	h.say("Write a tiny Go program")
	orig := m.conv.Last()
	h.key("tab", "home", "right", "right")
	if m.insp.Turn() != orig || m.insp.Step() != 2 {
		t.Fatalf("inspector at step %d, want 2", m.insp.Step())
	}
	cands := mustStepInfo(t, orig, 2).Candidates
	h.key("down")
	token := cands[m.insp.Cand()].ID
	if token == orig.Steps[2].ID {
		h.key("down")
		token = cands[m.insp.Cand()].ID
	}
	h.key("enter")
	h.idle()
	return orig, 2, token
}

// TestForkFromCandidate: Enter on another candidate asks the engine to
// continue from the kept prefix with that token, the new reply starts with
// the kept text and the forced piece, and the old reply stays as a branch.
func TestForkFromCandidate(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	orig, k, token := forkSecondStep(t, h, eng)

	req := eng.lastRequest()
	if req.Fork == nil || req.Fork.Token != token || len(req.Fork.Prefix) != k {
		t.Fatalf("fork request %+v, want token %d after %d kept tokens", req.Fork, token, k)
	}
	for i, id := range req.Fork.Prefix {
		if id != orig.Steps[i].ID {
			t.Errorf("prefix token %d is %d, the reply had %d", i, id, orig.Steps[i].ID)
		}
	}
	// The request's conversation is the one before the reply.
	if len(req.Messages) != 1 || req.Messages[0].Content != "Write a tiny Go program" {
		t.Errorf("fork request messages %+v", req.Messages)
	}
	forked := m.conv.Last()
	if forked == orig || len(m.conv.Turns()) != 2 {
		t.Fatalf("turns %d, the fork did not replace the reply on screen", len(m.conv.Turns()))
	}
	wantStart := orig.Content[:int(orig.Steps[k].Start)] + eng.TokenText(token)
	if !strings.HasPrefix(forked.Content, wantStart) {
		t.Errorf("forked reply %q, want it to start with %q", forked.Content, wantStart)
	}
	if s := mustStepInfo(t, forked, k); s.ID != token || !s.Forced || s.Index != k {
		t.Errorf("step %d of the fork: id %d forced %v index %d", k, s.ID, s.Forced, s.Index)
	}
	set := forked.Tree.Branch()
	if set == nil || set.Len() != 2 || set.Current() != 1 || set.First(0) != orig || orig.Tree.Branch() != set {
		t.Fatalf("branch set %+v", set)
	}
	view := m.View()
	for _, want := range []string{"⑂ branch 2/2", "forked at token 3"} {
		if !strings.Contains(view, want) {
			t.Errorf("screen lacks %q:\n%s", want, view)
		}
	}
}

// TestBranchSwitching: [ and ] walk the siblings, wrapping, and what is on
// screen (and sent next) is the chosen branch.
func TestBranchSwitching(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	orig, _, _ := forkSecondStep(t, h, eng)
	forked := m.conv.Last()

	h.key("tab")
	steps := []struct {
		key  string
		want *conversation.Turn
	}{
		{"[", orig}, {"[", forked}, {"]", orig}, {"]", forked}, {"]", orig},
	}
	for i, s := range steps {
		h.key(s.key)
		if m.conv.Last() != s.want {
			t.Fatalf("step %d (%s): wrong branch on screen", i, s.key)
		}
	}
	if !strings.Contains(m.View(), "⑂ branch 1/2") {
		t.Errorf("branch 1 not labelled:\n%s", m.View())
	}
	// Continuing the conversation on branch 1 builds on its reply.
	h.key("esc")
	h.say("more")
	req := eng.lastRequest()
	if len(req.Messages) != 3 || req.Messages[1].Content != orig.Content {
		t.Fatalf("request after switching sends %+v", req.Messages)
	}
	// The new exchange belongs to branch 1: switching away and back keeps it.
	h.key("tab", "]")
	if m.conv.Last() != forked || len(m.conv.Turns()) != 2 {
		t.Fatalf("branch 2 shows %d turns", len(m.conv.Turns()))
	}
	h.key("[")
	if len(m.conv.Turns()) != 4 || m.conv.Turns()[1] != orig || m.conv.Turns()[2].Content != "more" {
		t.Fatalf("branch 1 lost its continuation: %d turns", len(m.conv.Turns()))
	}
}

// TestRegenerateMakesSibling: Ctrl+R keeps the old reply as a branch.
func TestRegenerateMakesSibling(t *testing.T) {
	eng := newFakeEngine()
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(120, 40)
	h.say("hi")
	first := m.conv.Last()
	h.key("ctrl+r")
	h.idle()
	second := m.conv.Last()
	if second == first || second.Tree.Branch() == nil || second.Tree.Branch().Len() != 2 || first.Tree.Branch() != second.Tree.Branch() {
		t.Fatalf("regenerate did not make a sibling")
	}
	h.key("ctrl+r")
	h.idle()
	if set := m.conv.Last().Tree.Branch(); set.Len() != 3 || set.Current() != 2 {
		t.Fatalf("second regenerate: %d alternatives, current %d", set.Len(), set.Current())
	}
}

// TestTreeSaveLoad: a branched conversation saves its tree (and the path on
// screen as plain messages) and loads back with every branch, the one shown
// and the fork marks.
func TestTreeSaveLoad(t *testing.T) {
	eng := newFakeEngine()
	dir := t.TempDir()
	m := newTestModel(t, eng, Config{StateDir: dir})
	h := newHarness(t, m)
	h.size(160, 48)
	orig, _, _ := forkSecondStep(t, h, eng)
	forked := m.conv.Last()
	h.key("esc")
	h.say("and then?")
	m.saver.Save()
	path := m.conv.Path()

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c conversation.File
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	// The flat tree: u, the original reply and the fork (both children of
	// u, the fork on screen), then the fork's continuation.
	if len(c.Messages) != 4 || c.Messages[1].Content != forked.Content || c.Version != 2 || len(c.Nodes) != 5 || c.Tree != nil ||
		c.Nodes[1].Parent != 0 || c.Nodes[2].Parent != 0 || c.Nodes[1].Active || !c.Nodes[2].Active || c.Nodes[2].Fork == nil ||
		c.Nodes[3].Parent != 2 || c.Nodes[4].Parent != 3 {
		t.Fatalf("saved messages %d, version %d, nodes %+v", len(c.Messages), c.Version, c.Nodes)
	}

	m2 := newTestModel(t, newFakeEngine(), Config{StateDir: dir, LoadConversation: path})
	if m2.loadErr != nil {
		t.Fatal(m2.loadErr)
	}
	h2 := newHarness(t, m2)
	h2.size(160, 48)
	if len(m2.conv.Turns()) != 4 || m2.conv.Turns()[1].Content != forked.Content || m2.conv.Turns()[3].Content != m.conv.Turns()[3].Content {
		t.Fatalf("loaded path has %d turns", len(m2.conv.Turns()))
	}
	r := m2.conv.Turns()[1]
	if set := r.Tree.Branch(); set == nil || set.Len() != 2 || set.Current() != 1 || !r.Tree.Forked || r.Tree.ForkStep != 2 {
		t.Fatalf("loaded branch point %+v fork %+v", set, r.Tree)
	}
	if !strings.Contains(m2.View(), "forked at token 3") {
		t.Errorf("fork mark not shown after loading:\n%s", m2.View())
	}
	h2.key("alt+,")
	if len(m2.conv.Turns()) != 2 || m2.conv.Turns()[1].Content != orig.Content {
		t.Fatalf("branch 1 after loading: %d turns", len(m2.conv.Turns()))
	}
	// Saving again round-trips the same tree.
	m2.saver.Save()
	raw2, _ := os.ReadFile(m2.conv.Path())
	var c2 conversation.File
	if err := json.Unmarshal(raw2, &c2); err != nil {
		t.Fatal(err)
	}
	if len(c2.Nodes) != 5 || !c2.Nodes[1].Active || c2.Nodes[2].Active || len(c2.Messages) != 2 {
		t.Errorf("resaved tree %+v", c2.Nodes)
	}
}

// TestTreeRejectsBadFiles: a malformed tree is refused with the file and
// the node named, and a file without a tree still loads.
func TestTreeRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, tree, want string }{
		{"active out of range", `[{"role":"user","content":"a"},{"branches":{"active":2,"paths":[[{"role":"assistant","content":"b"}]]}}]`, "tree[1].branches: active is 2 but there are 1 paths"},
		{"branch not last", `[{"branches":{"active":0,"paths":[[{"role":"user","content":"b"}]]}},{"role":"user","content":"a"}]`, "tree[0]: a branch point must be the last node"},
		{"empty path", `[{"branches":{"active":0,"paths":[[]]}}]`, "tree[0].branches.paths[0]: a path must start with a turn"},
		{"bad role", `[{"role":"system","content":"a"}]`, `tree[0]: role is "system"`},
		{"nested bad role", `[{"branches":{"active":0,"paths":[[{"role":"user","content":"a"},{"role":"x"}]]}}]`, `tree[0].branches.paths[0][1]: role is "x"`},
	}
	for _, tc := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
		body := `{"version":1,"messages":[{"role":"user","content":"a"}],"tree":` + tc.tree + `}`
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := conversation.Read(p, newFakeEngine().params)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s and %q", tc.name, err, p, tc.want)
		}
	}
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte(`{"version":1,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t, newFakeEngine(), Config{StateDir: dir, LoadConversation: old})
	if m.loadErr != nil || len(m.conv.Turns()) != 2 || m.conv.Turns()[1].Tree.Branch() != nil {
		t.Fatalf("old file: err %v, %d turns", m.loadErr, len(m.conv.Turns()))
	}
}

// TestPrefillProgressShown: progress events show in the title and the
// speed panel while the prompt is read.
func TestPrefillProgressShown(t *testing.T) {
	eng := newFakeEngine()
	eng.progress = []engine.PrefillProgress{{Done: 128, Total: 512, Elapsed: 400e6}, {Done: 256, Total: 512, Elapsed: 800e6}}
	eng.holdPrefill = true
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(160, 48)
	h.typeText("long")
	h.key("enter")
	h.waitFor("the progress", func() bool { return m.run.Progress != nil && m.run.Progress.Done == 256 })
	view := m.View()
	for _, want := range []string{"reading prompt 256/512 · ETA 800ms", "prefill     256/512 · ETA 800ms"} {
		if !strings.Contains(view, want) {
			t.Errorf("screen lacks %q:\n%s", want, view)
		}
	}
	close(eng.release)
	h.idle()
	if strings.Contains(m.View(), "ETA") {
		t.Errorf("ETA still shown after the prompt was read")
	}
}

// TestForkInCompletionMode: completion mode has no turn labels, so the
// branch shows as a note under the running text.
func TestForkInCompletionMode(t *testing.T) {
	eng := newFakeEngine()
	eng.info.Completion, eng.info.TemplateName = true, ""
	m := newTestModel(t, eng, Config{})
	h := newHarness(t, m)
	h.size(120, 40)
	forkSecondStep(t, h, eng)
	if v := m.View(); !strings.Contains(v, "⑂ branch 2/2 · alt+, / alt+. switch") || !strings.Contains(v, "forked at token 3") {
		t.Errorf("fork not marked in completion mode:\n%s", v)
	}
	if req := eng.lastRequest(); req.Fork == nil || len(req.Messages) != 1 {
		t.Errorf("completion fork request %+v", req)
	}
}
