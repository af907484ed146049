// Package sampler is the chat's generation settings as the user changes
// them: the sampler parameters (temperature, top-p, top-k, min-p, the
// penalties, the seed), the reply length and the stop strings. It owns
// the slash commands that set them (/temp, /top-p, /top-k, /min-p,
// /repeat, /presence, /frequency, /max-tokens, /stop, /seed) and the
// alt+letter keys that step them while typing, and asks the engine to
// re-rank the last distribution under each change (a preview).
//
// The panels draw the settings (ui/panels); the root hands this package
// the keys it does not take itself and routes its PreviewMsg back to it.
package sampler
