package conversation

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"vkchat/runtime/chat"
	"vkchat/runtime/sample"
)

// deepBranches is a chat where every reply was regenerated once and the
// talk went on from the new one: depth nested branch points.
func deepBranches(depth int) *Conversation {
	c := New(false, "sys")
	c.Append(&Turn{Role: "user", Content: "u0"}, &Turn{Role: "assistant", Content: "a0"})
	for i := range depth {
		set := c.OpenBranch(c.Len() - 1)
		r := &Turn{Role: "assistant", Content: fmt.Sprintf("a%d'", i)}
		c.Append(r)
		c.JoinBranch(set, r)
		c.Append(&Turn{Role: "user", Content: fmt.Sprintf("u%d", i+1)}, &Turn{Role: "assistant", Content: fmt.Sprintf("a%d", i+1)})
	}
	return c
}

func branchPoints(ts []*Turn) int {
	n := 0
	for _, t := range ts {
		if t.Tree.Branch() != nil {
			n++
		}
	}
	return n
}

// 1,000 nested branches: the file stays small (the nested format wrote
// tens of MB, past what the loader reads) and loads back with every
// branch point, the path on screen and the other alternatives intact.
func TestDeepBranchingSavesSmallAndReloads(t *testing.T) {
	const depth = 1000
	c := deepBranches(depth)
	p := filepath.Join(t.TempDir(), "deep.json")
	if err := Write(p, c.Snapshot(Meta{Model: "m.gguf"}, time.Unix(0, 0))); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() >= 1<<20 {
		t.Fatalf("file is %d bytes for %d branches, want under 1 MiB", info.Size(), depth)
	}
	f, err := Read(p, sample.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 2 || len(f.Nodes) != 2+3*depth {
		t.Fatalf("version %d, %d nodes, want 2 and %d", f.Version, len(f.Nodes), 2+3*depth)
	}
	c2 := New(false, "")
	c2.Load(f, p)
	if got, want := names(c2.Turns()), names(c.Turns()); got != want {
		t.Fatalf("path on screen differs after reload:\n got %.200s\nwant %.200s", got, want)
	}
	if c2.System() != "sys" || branchPoints(c2.Turns()) != depth {
		t.Fatalf("system %q, %d branch points, want %d", c2.System(), branchPoints(c2.Turns()), depth)
	}
	// The original reply at the deepest and at the first branch point.
	if i, k, n, ok := c2.SwitchBranch(c2.Len()-1, -1); !ok || k != 1 || n != 2 || c2.Turns()[i].Content != fmt.Sprintf("a%d", depth-1) || c2.Len() != i+1 {
		t.Fatalf("deepest switch: i %d, %d of %d, ok %v, path ends %q", i, k, n, ok, c2.Last().Content)
	}
	if i, _, _, ok := c2.SwitchBranch(1, -1); !ok || i != 1 || names(c2.Turns()) != "u0 a0" {
		t.Fatalf("first switch: i %d ok %v, path %q", i, ok, names(c2.Turns()))
	}
	// And saving the reloaded one gives the same tree.
	c2.SwitchBranch(1, +1)
	c2.SwitchBranch(-1, +1)
	if a, b := c.saveNodes(), c2.saveNodes(); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("resaved tree differs")
	}
}

// Format 1 files (nested "tree", or only "messages") still load, and a
// rewrite turns the tree into nodes without keeping the old "tree".
func TestOldFormatsLoad(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	body := `{"version":1,"messages":[{"role":"user","content":"u"},{"role":"assistant","content":"b"},{"role":"user","content":"v"}],
	"tree":[{"role":"user","content":"u"},{"branches":{"active":1,"paths":[[{"role":"assistant","content":"a"}],[{"role":"assistant","content":"b"},{"role":"user","content":"v"}]]}}]}`
	if err := os.WriteFile(old, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Read(old, sample.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	c := New(false, "")
	c.Load(f, old)
	if names(c.Turns()) != "u b v" || branchPoints(c.Turns()) != 1 {
		t.Fatalf("loaded %q", names(c.Turns()))
	}
	if err := Write(old, c.Snapshot(Meta{}, time.Now())); err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	data, _ := os.ReadFile(old)
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["tree"]; ok || raw["nodes"] == nil || string(raw["version"]) != "2" {
		t.Fatalf("rewritten file: tree kept %v, nodes %s, version %s", ok, raw["nodes"], raw["version"])
	}

	plain := filepath.Join(dir, "plain.json")
	os.WriteFile(plain, []byte(`{"messages":[{"role":"user","content":"hi"}]}`), 0o600)
	if f, err := Read(plain, sample.Defaults()); err != nil || len(f.Messages) != 1 {
		t.Fatalf("messages-only file: %v %+v", err, f)
	}
}

// Loading a conversation and saving it keeps the top-level fields this
// vkchat does not know, values untouched.
func TestUnknownFieldsSurviveLoadAndSave(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.json")
	body := `{"version":1,"future":{"a":[1,2,{"b":null}]},"z_tool":"kept","messages":[{"role":"user","content":"hi"}]}`
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Read(p, sample.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	c := New(false, "")
	c.Load(f, p)
	c.Append(&Turn{Role: "assistant", Content: "hello"})
	var s Saver
	if res := s.Autosave(c, t.TempDir(), Meta{}, time.Now); res.Err != nil {
		t.Fatal(res.Err)
	}
	data, _ := os.ReadFile(p)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var future any
	json.Unmarshal(raw["future"], &future)
	if fmt.Sprint(future) != "map[a:[1 2 map[b:<nil>]]]" || string(raw["z_tool"]) != `"kept"` {
		t.Fatalf("unknown fields after save: future %v, z_tool %s\n%s", future, raw["z_tool"], data)
	}
	if f2, err := Read(p, sample.Defaults()); err != nil || len(f2.Messages) != 2 {
		t.Fatalf("reread: %v", err)
	}
	// A new chat does not inherit them.
	c.Reset()
	if c.Snapshot(Meta{}, time.Now()).Extra != nil {
		t.Error("extra fields outlived Reset")
	}
}

// A save never writes what Read would refuse: too large, or a bad tree.
// The old file stays as it was.
func TestWriteRefusesWhatWouldNotLoad(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.json")
	good := File{Version: 1, Messages: []chat.Message{{Role: "user", Content: "old"}}}
	if err := Write(p, good); err != nil {
		t.Fatal(err)
	}
	huge := File{Version: 1, Messages: []chat.Message{{Role: "user", Content: strings.Repeat("x", MaxFileBytes+1)}}}
	if err := Write(p, huge); err == nil || !strings.Contains(err.Error(), "MiB") || !strings.Contains(err.Error(), p) {
		t.Fatalf("oversized write: %v", err)
	}
	bad := File{Version: 2, Messages: good.Messages, Nodes: []savedTurn{{Parent: 3, Role: "user", Content: "x"}}}
	if err := Write(p, bad); err == nil || !strings.Contains(err.Error(), "nodes[0]: parent is 3") {
		t.Fatalf("bad tree write: %v", err)
	}
	if f, err := Read(p, sample.Defaults()); err != nil || f.Messages[0].Content != "old" {
		t.Fatalf("old file after refused writes: %v %+v", err, f.Messages)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// A malformed flat tree is refused with the node and what is wrong.
func TestNodesRejectBadFiles(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, nodes, want string }{
		{"forward parent", `[{"parent":1,"role":"user","content":"a"},{"parent":-1,"role":"user","content":"b"}]`, "nodes[0]: parent is 1, want an earlier node"},
		{"self parent", `[{"parent":-1,"role":"user","content":"a"},{"parent":1,"role":"user","content":"b"}]`, "nodes[1]: parent is 1"},
		{"below root", `[{"parent":-2,"role":"user","content":"a"}]`, "nodes[0]: parent is -2"},
		{"role", `[{"parent":-1,"role":"system","content":"a"}]`, `nodes[0]: role is "system"`},
		{"two active", `[{"parent":-1,"role":"user","content":"a","active":true},{"parent":-1,"role":"user","content":"b","active":true}]`, "both active"},
		{"fork step", `[{"parent":-1,"role":"assistant","content":"a","fork":{"step":-1}}]`, "nodes[0].fork: step is -1"},
	}
	for _, tc := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
		os.WriteFile(p, []byte(`{"version":2,"messages":[],"nodes":`+tc.nodes+`}`), 0o600)
		_, err := Read(p, sample.Defaults())
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want %q and the path", tc.name, err, tc.want)
		}
	}
	// A tree whose in-memory form would be huge (every branch point holds
	// the rest of the path) is refused, not built.
	n := 6000
	nodes := make([]savedTurn, 0, 2*n)
	for i := range n {
		parent := 2*i - 2
		if i == 0 {
			parent = -1
		}
		nodes = append(nodes, savedTurn{Parent: parent, Role: "user", Content: "a", Active: true}, savedTurn{Parent: parent, Role: "user", Content: "b"})
	}
	if _, err := checkNodes(nodes); err == nil || !strings.Contains(err.Error(), "branched too deeply") {
		t.Errorf("quadratic tree: %v", err)
	}
}

// Twelve chats saving for the first time in the same second get twelve
// files, each holding its own chat.
func TestConcurrentFirstSavesGetOwnFiles(t *testing.T) {
	dir := t.TempDir()
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	const n = 12
	convs := make([]*Conversation, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		convs[i] = New(false, "")
		convs[i].Append(&Turn{Role: "user", Content: fmt.Sprintf("chat %d", i)})
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s Saver
			errs[i] = s.Autosave(convs[i], dir, Meta{}, now).Err
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, c := range convs {
		if errs[i] != nil {
			t.Fatalf("chat %d: %v", i, errs[i])
		}
		if seen[c.Path()] {
			t.Fatalf("two chats saved to %s", c.Path())
		}
		seen[c.Path()] = true
		f, err := Read(c.Path(), sample.Defaults())
		if err != nil || len(f.Messages) != 1 || f.Messages[0].Content != fmt.Sprintf("chat %d", i) {
			t.Fatalf("chat %d's file %s: %v %+v", i, c.Path(), err, f.Messages)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != n {
		t.Errorf("%d files, want %d", len(entries), n)
	}
}

// A first save that fails gives its claimed name back, so the directory
// holds no empty file that would not load.
func TestFailedFirstSaveLeavesNoEmptyFile(t *testing.T) {
	dir := t.TempDir()
	c := New(false, "")
	c.Append(&Turn{Role: "user", Content: "x"})
	s := Saver{Write: func(string, File) error { return fmt.Errorf("disk full") }}
	if res := s.Autosave(c, dir, Meta{}, time.Now); res.Err == nil {
		t.Fatal("no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 || c.Path() != "" {
		t.Errorf("after a failed first save: %v, path %q", entries, c.Path())
	}
}

// CleanTemp removes only old temporary files of Write's.
func TestCleanTemp(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	mk := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x"), 0o600)
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	mk(".a.json.123.tmp", 2*time.Hour) // left by a crash: goes
	mk(".b.json.456.tmp", time.Minute) // a save in progress: stays
	mk("c.json", 2*time.Hour)          // a chat: stays
	mk(".hidden.tmp", 2*time.Hour)     // not one of ours: stays
	if n := CleanTemp(dir, now); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != ".b.json.456.tmp .hidden.tmp c.json" {
		t.Errorf("left %v", left)
	}
}

// /load of a FIFO or a device is refused at once, naming the file, instead
// of blocking for a writer or reading forever.
func TestReadRefusesNonRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{fifo, "/dev/zero", t.TempDir()} {
		done := make(chan error, 1)
		go func() { _, err := Read(p, sample.Defaults()); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("%s: %v, want an error naming it", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Read(%s) hangs", p)
		}
	}
}
