package conversation

import (
	"fmt"

	"vkchat/runtime/chat"
)

// The save file keeps "messages" as the path on screen, which is all an
// older vkchat reads, and adds "tree" only when the conversation branches:
// the same path, except that a branch point is a node holding every
// alternative's path from there on. Files without "tree" load as before.

// savedNode is one turn, or (with Branches) the alternatives at a branch
// point, which end the list they are in.
type savedNode struct {
	Role     string         `json:"role,omitempty"`
	Content  string         `json:"content,omitempty"`
	Fork     *savedFork     `json:"fork,omitempty"`
	Branches *savedBranches `json:"branches,omitempty"`
}

// savedFork marks a reply forked from an earlier one at step Step.
type savedFork struct {
	Step  int    `json:"step"`
	Token string `json:"token"` // the token chosen there, as shown
	Was   string `json:"was"`   // the one it replaced
}

type savedBranches struct {
	Active int           `json:"active"`
	Paths  [][]savedNode `json:"paths"`
}

// saveTree encodes the conversation tree, or nil when it has no branches.
func (c *Conversation) saveTree() []savedNode {
	c.syncBranches()
	branched := false
	for _, t := range c.turns {
		if t.Tree.branch != nil {
			branched = true
		}
	}
	if !branched {
		return nil
	}
	return encodePath(c.turns, false)
}

func encodePath(turns []*Turn, atBranch bool) []savedNode {
	var out []savedNode
	for i, t := range turns {
		if set := t.Tree.branch; set != nil && !(i == 0 && atBranch) {
			b := savedBranches{}
			for k, alt := range set.alts {
				p := encodePath(alt, true)
				if len(p) == 0 {
					continue // a reply that has not written anything yet
				}
				if k == set.cur {
					b.Active = len(b.Paths)
				}
				b.Paths = append(b.Paths, p)
			}
			if len(b.Paths) == 0 {
				return out
			}
			return append(out, savedNode{Branches: &b})
		}
		if t.Content == "" {
			continue
		}
		n := savedNode{Role: t.Role, Content: t.Content}
		if t.Tree.Forked {
			n.Fork = &savedFork{Step: t.Tree.ForkStep, Token: t.Tree.ForkText, Was: t.Tree.WasText}
		}
		out = append(out, n)
	}
	return out
}

// checkTree validates a saved tree without building it.
func checkTree(nodes []savedNode) error {
	_, err := decodePath(nodes, "tree")
	return err
}

// treeTurns rebuilds the turns on screen, with their alternatives, from a
// saved tree.
func treeTurns(nodes []savedNode) ([]*Turn, error) { return decodePath(nodes, "tree") }

func decodePath(nodes []savedNode, where string) ([]*Turn, error) {
	var out []*Turn
	for i, n := range nodes {
		at := fmt.Sprintf("%s[%d]", where, i)
		if b := n.Branches; b != nil {
			if i != len(nodes)-1 {
				return nil, fmt.Errorf("%s: a branch point must be the last node of its list", at)
			}
			if len(b.Paths) == 0 || b.Active < 0 || b.Active >= len(b.Paths) {
				return nil, fmt.Errorf("%s.branches: active is %d but there are %d paths", at, b.Active, len(b.Paths))
			}
			set := &BranchSet{cur: b.Active, prev: b.Active}
			for k, p := range b.Paths {
				pat := fmt.Sprintf("%s.branches.paths[%d]", at, k)
				if len(p) == 0 || p[0].Branches != nil {
					return nil, fmt.Errorf("%s: a path must start with a turn", pat)
				}
				ts, err := decodePath(p, pat)
				if err != nil {
					return nil, err
				}
				ts[0].Tree.branch = set
				set.alts = append(set.alts, ts)
			}
			return append(out, set.alts[set.cur]...), nil
		}
		if n.Role != chat.RoleUser && n.Role != chat.RoleAssistant {
			return nil, fmt.Errorf("%s: role is %q, want user or assistant", at, n.Role)
		}
		t := &Turn{Role: n.Role, Content: n.Content}
		if f := n.Fork; f != nil {
			if f.Step < 0 {
				return nil, fmt.Errorf("%s.fork: step is %d", at, f.Step)
			}
			t.Tree = Tree{Forked: true, ForkStep: f.Step, ForkText: f.Token, WasText: f.Was}
			t.AddNote(NoteInfo, forkNote(t), true)
		}
		out = append(out, t)
	}
	return out, nil
}
