package conversation

import (
	"errors"
	"fmt"
	"slices"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
)

// The conversation is a tree. Turns() is the path on screen; where it
// branches, the first turn of each alternative points to the BranchSet they
// share, whose alts hold each alternative's path from that position on. A
// fork (an alternative token forced at some step) and a regenerated reply
// both add an alternative; SwitchBranch moves between them.

// BranchSet is the alternatives at one position of the conversation.
type BranchSet struct {
	alts [][]*Turn // each alternative's turns from this position on
	cur  int       // the one on screen
	prev int       // the one on screen before the newest was added
}

// Len is the number of alternatives.
func (s *BranchSet) Len() int { return len(s.alts) }

// Current is the index of the alternative on screen.
func (s *BranchSet) Current() int { return s.cur }

// First is the first turn of alternative k.
func (s *BranchSet) First(k int) *Turn { return s.alts[k][0] }

// Tree is what a turn knows about its place in the tree.
type Tree struct {
	branch *BranchSet // shared by the first turns of the alternatives here
	// Forked: the reply continues an earlier one from step ForkStep with a
	// token the user chose (ForkText, replacing WasText).
	Forked            bool
	ForkStep          int
	ForkText, WasText string
}

// Branch is the branch point this turn starts an alternative of, or nil.
func (t Tree) Branch() *BranchSet { return t.branch }

// BranchPos says which alternative of its branch point t starts: the
// k-th (from 1) of n; ok is false when t starts none.
func (t *Turn) BranchPos() (k, n int, ok bool) {
	set := t.Tree.branch
	if set == nil {
		return 0, 0, false
	}
	for i, alt := range set.alts {
		if len(alt) > 0 && alt[0] == t {
			return i + 1, len(set.alts), true
		}
	}
	return 0, 0, false
}

// syncBranches records the path on screen as the current alternative of
// every branch point along it, so the tree always matches what is shown.
func (c *Conversation) syncBranches() {
	for i, t := range c.turns {
		if set := t.Tree.branch; set != nil {
			set.alts[set.cur] = syncPath(set.alts[set.cur], c.turns[i:])
		}
	}
}

// syncPath makes an alternative's path (which its set owns) hold path:
// when it is a prefix of it (turns were added since), only the new turns
// are appended, so a deeply branched chat does not copy every branch
// point's path on every change.
func syncPath(alt, path []*Turn) []*Turn {
	if len(alt) <= len(path) && slices.Equal(alt, path[:len(alt)]) {
		return append(alt, path[len(alt):]...)
	}
	return append([]*Turn(nil), path...)
}

// OpenBranch makes position i a branch point (if it is not yet one) and
// cuts the path there, ready for a new alternative (JoinBranch).
func (c *Conversation) OpenBranch(i int) *BranchSet {
	c.syncBranches()
	set := c.turns[i].Tree.branch
	if set == nil {
		set = &BranchSet{alts: [][]*Turn{append([]*Turn(nil), c.turns[i:]...)}}
		c.turns[i].Tree.branch = set
	}
	c.turns = c.turns[:i:i]
	return set
}

// JoinBranch makes first, just appended at the branch point, the newest
// alternative of set.
func (c *Conversation) JoinBranch(set *BranchSet, first *Turn) {
	if set == nil || first == nil {
		return
	}
	first.Tree.branch = set
	set.prev = set.cur
	set.alts = append(set.alts, []*Turn{first})
	set.cur = len(set.alts) - 1
	c.rev++
}

// dropBranch undoes JoinBranch for a reply that produced nothing (it was
// removed from position i): its alternative goes, and the one shown before
// comes back.
func (c *Conversation) dropBranch(t *Turn, i int) {
	set := t.Tree.branch
	if set == nil || i < 0 {
		return
	}
	for k, alt := range set.alts {
		if len(alt) > 0 && alt[0] == t {
			set.alts = append(set.alts[:k], set.alts[k+1:]...)
			break
		}
	}
	if len(set.alts) == 0 {
		return
	}
	set.cur = min(set.prev, len(set.alts)-1)
	c.turns = append(c.turns[:i:i], set.alts[set.cur]...)
	if len(set.alts) == 1 {
		set.alts[0][0].Tree.branch = nil
	}
	c.rev++
}

// SwitchBranch shows the next (dir=+1) or previous alternative at the
// branch point at or before position from, else (or with from < 0) at the
// newest branch point. It returns that position and which alternative of
// how many is now shown; ok is false when the path has no branch point.
func (c *Conversation) SwitchBranch(from, dir int) (i, k, n int, ok bool) {
	c.syncBranches()
	i = -1
	for j := min(from, len(c.turns)-1); j >= 0; j-- {
		if c.turns[j].Tree.branch != nil {
			i = j
			break
		}
	}
	if i < 0 {
		for j := len(c.turns) - 1; j >= 0; j-- {
			if c.turns[j].Tree.branch != nil {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return -1, 0, 0, false
	}
	set := c.turns[i].Tree.branch
	set.cur = (set.cur + dir + len(set.alts)) % len(set.alts)
	c.turns = append(c.turns[:i:i], set.alts[set.cur]...)
	c.rev++
	return i, set.cur + 1, len(set.alts), true
}

// Fork is a planned fork of a reply: what the new reply keeps and where
// the engine continues from.
type Fork struct {
	At    int              // the forked reply's position on screen
	Step  int              // the step the new token replaces
	Was   int32            // the token the reply had there
	Point engine.ForkPoint // the kept tokens and the forced one, for the request
	Kept  Turn             // the text, steps, detail and reasoning before the fork point
}

// Why a fork cannot be planned.
var (
	ErrNotForkable = errors.New("nothing to fork here")
	ErrSameToken   = errors.New("that is the token the reply already has")
)

// ForkRefusal is the line a chat shows for PlanFork's error, and whether
// it is an error (else a hint: the token picked is the one drawn).
func ForkRefusal(err error) (line string, isErr bool) {
	switch {
	case errors.Is(err, ErrSameToken):
		return "that is the token the reply already has; ↑/↓ picks another", false
	case errors.Is(err, ErrDetailsNotKept):
		return fmt.Sprintf("details not kept for this older reply (only the %d newest keep each token's alternatives): fork a recent one", DetailReplies), true
	}
	return "nothing to fork here: pick a token of a reply generated in this session", true
}

// PlanFork checks that reply t can continue from step k with token
// instead of what was drawn there and returns what that fork keeps. The
// errors are ErrNotForkable, ErrSameToken and ErrDetailsNotKept (a fork
// needs the step's detail, which older replies drop).
func (c *Conversation) PlanFork(t *Turn, k int, token int32) (*Fork, error) {
	i := c.Index(t)
	if i < 0 || t.Role != chat.RoleAssistant || k < 0 || k >= len(t.Steps) {
		return nil, ErrNotForkable
	}
	if token == t.Steps[k].ID {
		return nil, ErrSameToken
	}
	kept, ok := t.Prefix(k)
	if !ok {
		return nil, ErrDetailsNotKept
	}
	prefix := make([]int32, k)
	for j := range prefix {
		prefix[j] = t.Steps[j].ID
	}
	return &Fork{At: i, Step: k, Was: t.Steps[k].ID, Point: engine.ForkPoint{Prefix: prefix, Token: token}, Kept: kept}, nil
}

// MarkForked records that reply t continues an earlier one from step k
// with token text forkText instead of wasText, with a note saying so.
func (t *Turn) MarkForked(k int, forkText, wasText string) {
	t.Tree.Forked, t.Tree.ForkStep = true, k
	t.Tree.ForkText, t.Tree.WasText = forkText, wasText
	t.AddNote(NoteInfo, forkNote(t), true)
}

// forkNote is the line under a forked reply's label that marks the fork point.
// It names alt+, and alt+., which switch branches wherever the focus is ([
// and ] type into the message outside the inspector). The token texts are already escaped (termtext.Visible): quoted with %q
// their backslashes would be escaped a second time ("\\xA2").
func forkNote(t *Turn) string {
	return fmt.Sprintf("⑂ forked at token %d: \"%s\" instead of \"%s\" (alt+, / alt+. switch)", t.Tree.ForkStep+1, t.Tree.ForkText, t.Tree.WasText)
}
