// Package transcript draws the conversation: each turn's label, notes and
// text, replies as Markdown (glamour), reasoning blocks folded or shown,
// and a scrolled window onto it all (a bubbles/viewport) that follows a
// streaming reply until the user scrolls up.
//
// It owns everything drawing needs to be fast: the rows of every turn,
// kept per *conversation.Turn until something they show changes (the
// width, the cursor, the heatmap, the tree's revision), and each reply's
// rendered Markdown blocks, so a streamed token renders only the block it
// extends; while a reply streams, an open block that is slow to render is
// held back and redrawn later (RedrawMsg). The caches live here rather
// than in the turns so the conversation stays free of drawing.
//
// It reads the conversation (ui/conversation) and the inspector's heatmap
// levels (ui/inspector) but changes neither, and it never imports the
// root UI: the root hands it its size, the inspector's cursor and the
// reply being generated (SetSize, SetCursor, SetReply) and routes keys to
// it (ScrollBy); the mouse wheel and RedrawMsg go through Update. Keeping
// the rendering here means a change to how turns look cannot reach the
// routing, and it is tested on plain turns without a running program.
package transcript
