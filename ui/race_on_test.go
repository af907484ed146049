//go:build race

package ui

// raceEnabled: the race detector slows the engine ~20x; the soak skips under it.
const raceEnabled = true
