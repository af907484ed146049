// Package trace is the reproducible record of a generation: the logprob
// export (JSON Lines: a Header, then one Token line per generated token
// with the likeliest alternatives, and the logit lens of the tokens whose
// lens was read, when asked) and its replay, which runs a recorded
// generation again and names the first token or log-probability that
// differs.
//
// It sits on top of the engine and uses only its public API (a Session's
// Generate, SetParams, SetSamplerState, TokenText, Info), so the engine
// knows nothing about file formats: `vkchat run --logprobs`, `vkchat
// replay`, the chat's /export and its saved sampler settings all read and
// write through this package.
package trace
