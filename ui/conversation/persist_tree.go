package conversation

import (
	"fmt"

	"vkchat/runtime/chat"
)

// The save file keeps "messages" as the path on screen, which is all an
// older vkchat reads, and adds "nodes" only when the conversation branches:
// every turn of the tree once, in a flat list where each names its parent
// by index (an earlier node, -1 for the first turn of the chat). Siblings
// are the alternatives at a branch point, in order; the one on screen is
// marked "active". A flat list keeps the file linear in the number of
// turns however deep the branching goes (the nested "tree" of format 1
// grew with the square of the depth once indented) and keeps JSON nesting
// constant. Files with the format-1 "tree", or only "messages", still load.

// savedTurn is one node of the flat tree (format 2).
type savedTurn struct {
	Parent  int        `json:"parent"`
	Role    string     `json:"role"`
	Content string     `json:"content"`
	Fork    *savedFork `json:"fork,omitempty"`
	Active  bool       `json:"active,omitempty"` // on screen among its siblings
}

// savedNode is one turn, or (with Branches) the alternatives at a branch
// point, which end the list they are in: format 1's nested tree, still read.
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

// MaxTreeCells bounds the memory a loaded tree takes: every branch point
// holds each alternative's path from there on, so a deeply branched tree
// costs the sum of those lengths (a pointer each). A save over it is
// refused like a load, so nothing written is unloadable.
const MaxTreeCells = 8 << 20

// saveNodes encodes the conversation tree, or nil when it has no branches.
func (c *Conversation) saveNodes() []savedTurn {
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
	var e nodeEncoder
	e.path(c.turns, -1, false)
	return e.nodes
}

type nodeEncoder struct{ nodes []savedTurn }

// path appends turns (an alternative's path when atBranch: its first turn
// is the branch point's, already being encoded) under parent.
func (e *nodeEncoder) path(turns []*Turn, parent int, atBranch bool) {
	for i, t := range turns {
		if set := t.Tree.branch; set != nil && !(i == 0 && atBranch) {
			for k, alt := range set.alts {
				first := len(e.nodes)
				e.path(alt, parent, true)
				if k == set.cur && len(e.nodes) > first {
					e.nodes[first].Active = true
				}
			}
			return
		}
		text := t.ModelText()
		if text == "" {
			continue // a reply that has not written anything yet
		}
		n := savedTurn{Parent: parent, Role: t.Role, Content: text}
		if t.Tree.Forked {
			n.Fork = &savedFork{Step: t.Tree.ForkStep, Token: t.Tree.ForkText, Was: t.Tree.WasText}
		}
		e.nodes = append(e.nodes, n)
		parent = len(e.nodes) - 1
	}
}

// nodeTree is a checked flat tree: each node's children and which of them
// is on screen (index 0 is the chat's start, node i is at i+1).
type nodeTree struct {
	nodes    []savedTurn
	children [][]int // by node+1
	active   []int   // by node+1: the child on screen, -1 for none
	pathLen  []int   // by node+1: turns on the path on screen from here
}

// checkNodes validates a flat tree, including the memory it would take.
func checkNodes(nodes []savedTurn) (*nodeTree, error) {
	nt := &nodeTree{nodes: nodes, children: make([][]int, len(nodes)+1), active: make([]int, len(nodes)+1), pathLen: make([]int, len(nodes)+1)}
	for i, n := range nodes {
		at := fmt.Sprintf("nodes[%d]", i)
		if n.Parent < -1 || n.Parent >= i {
			return nil, fmt.Errorf("%s: parent is %d, want an earlier node (-1 to %d)", at, n.Parent, i-1)
		}
		if n.Role != chat.RoleUser && n.Role != chat.RoleAssistant {
			return nil, fmt.Errorf("%s: role is %q, want user or assistant", at, n.Role)
		}
		if n.Fork != nil && n.Fork.Step < 0 {
			return nil, fmt.Errorf("%s.fork: step is %d", at, n.Fork.Step)
		}
		nt.children[n.Parent+1] = append(nt.children[n.Parent+1], i)
	}
	for p, kids := range nt.children {
		nt.active[p] = -1
		for _, k := range kids {
			if !nodes[k].Active {
				continue
			}
			if nt.active[p] >= 0 {
				return nil, fmt.Errorf("nodes[%d]: nodes %d and %d are both active alternatives", k, nt.active[p], k)
			}
			nt.active[p] = k
		}
		if nt.active[p] < 0 && len(kids) > 0 {
			nt.active[p] = kids[0]
		}
	}
	// Parents come first, so one backward pass gives the path lengths.
	for p := len(nodes); p >= 0; p-- {
		if a := nt.active[p]; a >= 0 {
			nt.pathLen[p] = nt.pathLen[a+1] + 1
		}
	}
	cells := nt.pathLen[0]
	for _, kids := range nt.children {
		if len(kids) < 2 {
			continue
		}
		for _, k := range kids {
			cells += nt.pathLen[k+1]
		}
		if cells > MaxTreeCells {
			return nil, fmt.Errorf("nodes: branched too deeply to load (over %d turns counted along every branch's path)", MaxTreeCells)
		}
	}
	return nt, nil
}

// turns rebuilds the path on screen, with the alternatives at each branch
// point, from a checked flat tree.
func (nt *nodeTree) turns() []*Turn {
	ts := make([]*Turn, len(nt.nodes))
	for i, n := range nt.nodes {
		t := &Turn{Role: n.Role, Content: n.Content}
		t.SplitLoaded()
		if f := n.Fork; f != nil {
			t.Tree = Tree{Forked: true, ForkStep: f.Step, ForkText: f.Token, WasText: f.Was}
			t.AddNote(NoteInfo, forkNote(t), true)
		}
		ts[i] = t
	}
	// path is the turns on screen from node k (a child) on.
	path := func(k int) []*Turn {
		out := make([]*Turn, 0, nt.pathLen[k+1])
		for ; k >= 0; k = nt.active[k+1] {
			out = append(out, ts[k])
		}
		return out
	}
	for p, kids := range nt.children {
		if len(kids) < 2 {
			continue
		}
		set := &BranchSet{}
		for j, k := range kids {
			if k == nt.active[p] {
				set.cur, set.prev = j, j
			}
			ts[k].Tree.branch = set
			set.alts = append(set.alts, path(k))
		}
	}
	if len(nt.children[0]) == 0 {
		return nil
	}
	return path(nt.active[0])
}

// checkTree validates a format-1 nested tree without building it.
func checkTree(nodes []savedNode) error {
	_, err := decodePath(nodes, "tree")
	return err
}

// treeTurns rebuilds the turns on screen, with their alternatives, from a
// format-1 nested tree.
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
		t.SplitLoaded()
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
