// Package inspector is the token inspector and the insight views around
// it: the cursor over a reply's tokens with the candidate picked for a
// fork, the probability panel's distribution (a step, a preview of new
// settings), the sampler funnel, the heatmap settings and the surprisal
// strip, for mixture-of-experts models the shown step's routing (the
// router panel) and the expert map of a reply, and the logit lens of the
// inspected token (lens.go: asked of the engine through the Host, off the
// UI goroutine, and kept per position).
//
// It owns its keys (keys.go: the KeyMap, its footer row and its section
// of the key reference) and handles them while the transcript has focus.
// It reads turns (ui/conversation) but changes none: what a move or a
// pick means for the chat (fork, switch branch, leave for the input) it
// asks of a Host the root implements, and what it wants said goes to the
// status line. That keeps the cursor rules testable on plain turns.
package inspector
