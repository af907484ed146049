package conversation

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// turnNamed is a turn whose Content names it in path strings; a reply
// ("a…", "b…", "x…") gets one step with detail per id.
func turnNamed(name string, ids ...int32) *Turn {
	if name[0] == 'u' {
		return &Turn{Role: "user", Content: name}
	}
	r := &Turn{Role: "assistant"}
	for i, id := range ids {
		piece := name
		if i > 0 {
			piece = "+"
		}
		r.AppendToken(engine.TokenInfo{ID: id, Piece: piece, Index: i,
			Candidates: []sample.Candidate{{ID: id, Prob: 0.6}, {ID: id + 100, Prob: 0.4}}})
	}
	if len(ids) == 0 {
		r.Content = name
	}
	return r
}

// names is the path on screen, "u1 a1 u2".
func names(ts []*Turn) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Content)
	}
	return strings.Join(out, " ")
}

// altNames is each alternative of set, as paths.
func altNames(set *BranchSet) []string {
	var out []string
	for _, alt := range set.alts {
		out = append(out, names(alt))
	}
	return out
}

// regenerate adds name as a new alternative at position i, as a
// regenerated reply or a fork does: OpenBranch, append, JoinBranch.
func regenerate(c *Conversation, i int, name string) *Turn {
	set := c.OpenBranch(i)
	t := turnNamed(name)
	c.Append(t)
	c.JoinBranch(set, t)
	return t
}

func TestOpenBranch(t *testing.T) {
	tests := []struct {
		name     string
		build    func(c *Conversation) // the path and tree before OpenBranch
		at       int
		path     string   // the path after OpenBranch
		alts     []string // the set's alternatives after OpenBranch
		cur      int      // the set's current alternative
		newPoint bool     // OpenBranch made the branch point
	}{
		{
			name:  "the last reply",
			build: func(c *Conversation) { c.Append(turnNamed("u1"), turnNamed("a1"), turnNamed("u2"), turnNamed("a2")) },
			at:    3, path: "u1 a1 u2", alts: []string{"a2"}, cur: 0, newPoint: true,
		},
		{
			name:  "an earlier reply keeps what follows it",
			build: func(c *Conversation) { c.Append(turnNamed("u1"), turnNamed("a1"), turnNamed("u2"), turnNamed("a2")) },
			at:    1, path: "u1", alts: []string{"a1 u2 a2"}, cur: 0, newPoint: true,
		},
		{
			name: "a branch point already there is reused",
			build: func(c *Conversation) {
				c.Append(turnNamed("u1"), turnNamed("a1"))
				regenerate(c, 1, "b1")
			},
			at: 1, path: "u1", alts: []string{"a1", "b1"}, cur: 1,
		},
		{
			name: "the current alternative records the turns added since",
			build: func(c *Conversation) {
				c.Append(turnNamed("u1"), turnNamed("a1"))
				regenerate(c, 1, "b1")
				c.Append(turnNamed("u2"), turnNamed("b2"))
			},
			at: 1, path: "u1", alts: []string{"a1", "b1 u2 b2"}, cur: 1,
		},
		{
			name: "a later position of a branched path",
			build: func(c *Conversation) {
				c.Append(turnNamed("u1"), turnNamed("a1"))
				regenerate(c, 1, "b1")
				c.Append(turnNamed("u2"), turnNamed("b2"))
			},
			at: 3, path: "u1 b1 u2", alts: []string{"b2"}, cur: 0, newPoint: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New(false, "")
			tc.build(c)
			first := c.Turns()[tc.at]
			before := first.Tree.Branch()
			set := c.OpenBranch(tc.at)
			if got := names(c.Turns()); got != tc.path {
				t.Errorf("path %q, want %q", got, tc.path)
			}
			if got := altNames(set); !slices.Equal(got, tc.alts) {
				t.Errorf("alternatives %q, want %q", got, tc.alts)
			}
			if set.Current() != tc.cur {
				t.Errorf("current %d, want %d", set.Current(), tc.cur)
			}
			if (before == nil) != tc.newPoint || (before != nil && before != set) {
				t.Errorf("set %p, the turn's before %p: new point %v", set, before, tc.newPoint)
			}
			if first.Tree.Branch() != set {
				t.Error("the cut turn does not point to its branch point")
			}

			// The next alternative joins as the newest and is shown.
			next := turnNamed("new")
			c.Append(next)
			c.JoinBranch(set, next)
			n := len(tc.alts) + 1
			if set.Len() != n || set.Current() != n-1 || set.First(n-1) != next {
				t.Errorf("after JoinBranch: %d alternatives, current %d", set.Len(), set.Current())
			}
			if k, m, ok := next.BranchPos(); !ok || k != n || m != n {
				t.Errorf("new alternative at %d/%d (%v), want %d/%d", k, m, ok, n, n)
			}
			if k, m, ok := set.First(0).BranchPos(); !ok || k != 1 || m != n {
				t.Errorf("first alternative at %d/%d (%v), want 1/%d", k, m, ok, n)
			}
		})
	}
}

// branchedConversation is u1 x1 u2 b2 with three alternatives at 1 (a1,
// b1, x1; x1 shown) and two at 3 (a2, b2; b2 shown).
func branchedConversation() *Conversation {
	c := New(false, "")
	c.Append(turnNamed("u1"), turnNamed("a1"))
	regenerate(c, 1, "b1")
	regenerate(c, 1, "x1")
	c.Append(turnNamed("u2"), turnNamed("a2"))
	regenerate(c, 3, "b2")
	return c
}

func TestSwitchBranch(t *testing.T) {
	type move struct{ from, dir int }
	tests := []struct {
		name  string
		moves []move
		// what the last move returns and shows
		i, k, n int
		path    string
	}{
		{"the newest branch point", []move{{-1, +1}}, 3, 1, 2, "u1 x1 u2 a2"},
		{"from the reply at a branch point", []move{{3, -1}}, 3, 1, 2, "u1 x1 u2 a2"},
		{"from past the end", []move{{99, +1}}, 3, 1, 2, "u1 x1 u2 a2"},
		{"the branch point before the position", []move{{2, -1}}, 1, 2, 3, "u1 b1"},
		{"forward wraps around", []move{{1, +1}}, 1, 1, 3, "u1 a1"},
		{"before any branch point: the newest", []move{{0, +1}}, 3, 1, 2, "u1 x1 u2 a2"},
		{"there and back again keeps what followed", []move{{1, +1}, {1, -1}}, 1, 3, 3, "u1 x1 u2 b2"},
		{"a switch below is kept when switching above", []move{{3, +1}, {1, -1}, {1, +1}}, 1, 3, 3, "u1 x1 u2 a2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := branchedConversation()
			var i, k, n int
			var ok bool
			for _, mv := range tc.moves {
				rev := c.Rev()
				i, k, n, ok = c.SwitchBranch(mv.from, mv.dir)
				if !ok {
					t.Fatalf("SwitchBranch(%d, %d): no branch point", mv.from, mv.dir)
				}
				if c.Rev() == rev {
					t.Error("a switch left the revision as it was")
				}
			}
			if i != tc.i || k != tc.k || n != tc.n {
				t.Errorf("switched at %d to %d of %d, want %d, %d of %d", i, k, n, tc.i, tc.k, tc.n)
			}
			if got := names(c.Turns()); got != tc.path {
				t.Errorf("path %q, want %q", got, tc.path)
			}
			set := c.Turns()[i].Tree.Branch()
			if set == nil || set.Current() != k-1 || set.First(k-1) != c.Turns()[i] {
				t.Errorf("the branch point at %d does not show alternative %d", i, k)
			}
		})
	}

	t.Run("no branch point", func(t *testing.T) {
		c := New(false, "")
		c.Append(turnNamed("u1"), turnNamed("a1"))
		rev := c.Rev()
		if i, _, _, ok := c.SwitchBranch(-1, +1); ok || i != -1 {
			t.Errorf("switched at %d (%v) in a path without branches", i, ok)
		}
		if names(c.Turns()) != "u1 a1" || c.Rev() != rev {
			t.Errorf("path %q, rev %d -> %d", names(c.Turns()), rev, c.Rev())
		}
	})
}

func TestPlanFork(t *testing.T) {
	tests := []struct {
		name    string
		turn    int // position of the forked turn; -1: a turn not in the conversation
		step    int
		token   int32
		noDet   bool // the reply's detail was dropped (an older reply)
		err     error
		prefix  []int32
		content string
	}{
		{name: "middle step", turn: 1, step: 1, token: 120, prefix: []int32{10}, content: "one"},
		{name: "first step", turn: 1, step: 0, token: 110, prefix: []int32{}, content: ""},
		{name: "last step", turn: 1, step: 2, token: 130, prefix: []int32{10, 20}, content: "one+"},
		{name: "the token it has", turn: 1, step: 1, token: 20, err: ErrSameToken},
		{name: "past the end", turn: 1, step: 3, token: 1, err: ErrNotForkable},
		{name: "before the start", turn: 1, step: -1, token: 1, err: ErrNotForkable},
		{name: "a user turn", turn: 0, step: 0, token: 1, err: ErrNotForkable},
		{name: "a turn not on the path", turn: -1, step: 0, token: 1, err: ErrNotForkable},
		{name: "details not kept", turn: 1, step: 1, token: 120, noDet: true, err: ErrDetailsNotKept},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New(false, "")
			reply := turnNamed("one", 10, 20, 30)
			c.Append(turnNamed("u1"), reply, turnNamed("u2"))
			if tc.noDet {
				reply.detail = nil // as the detail bounds drop it
			}
			target := turnNamed("elsewhere", 10, 20)
			if tc.turn >= 0 {
				target = c.Turns()[tc.turn]
			}
			rev, path := c.Rev(), names(c.Turns())
			f, err := c.PlanFork(target, tc.step, tc.token)
			if c.Rev() != rev || names(c.Turns()) != path {
				t.Errorf("planning changed the conversation: %q", names(c.Turns()))
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) || f != nil {
					t.Fatalf("PlanFork = %v, %v; want %v", f, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.At != tc.turn || f.Step != tc.step || f.Was != reply.Steps[tc.step].ID {
				t.Errorf("fork at %d step %d was %d", f.At, f.Step, f.Was)
			}
			if !slices.Equal(f.Point.Prefix, tc.prefix) || f.Point.Token != tc.token {
				t.Errorf("point %v + %d, want %v + %d", f.Point.Prefix, f.Point.Token, tc.prefix, tc.token)
			}
			if f.Kept.Content != tc.content || len(f.Kept.Steps) != tc.step {
				t.Errorf("keeps %q and %d steps, want %q and %d", f.Kept.Content, len(f.Kept.Steps), tc.content, tc.step)
			}
		})
	}
}
