// Package hub turns a model reference into a local GGUF file: a path is used
// as is, hf:OWNER/REPO[:QUANT] is resolved through the Hugging Face API, and
// a plain http(s) URL is downloaded. Downloads resume, verify their length
// (and the sha256 the Hub publishes) and are checked with gguf.Open before
// they appear in the store.
package hub

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultModel is the model vkchat pulls when none is named: SmolLM2-135M
// Instruct (Apache-2.0, ~145 MB at Q8_0), small enough to download in
// seconds and run on any CPU, and a llama-architecture chat model, the
// family vkchat's runtime implements first. bartowski's repo is used because
// it publishes one single-file GGUF per quant with the usual naming.
const DefaultModel = "hf:bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0"

// Kind says how a reference is resolved.
type Kind int

const (
	File Kind = iota // a local path
	HF               // hf:OWNER/REPO[:QUANT]
	URL              // http:// or https://
)

func (k Kind) String() string {
	switch k {
	case File:
		return "file"
	case HF:
		return "hf"
	case URL:
		return "url"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Ref is a parsed model reference.
type Ref struct {
	Kind  Kind
	Raw   string // as typed
	Path  string // File: the path
	Owner string // HF
	Repo  string // HF
	// Quant is the requested quantization (HF), "" for the default choice.
	// A value ending in .gguf names a file in the repo exactly.
	Quant string
	URL   *url.URL // URL
}

func (r Ref) String() string { return r.Raw }

// RepoID is OWNER/REPO for HF refs.
func (r Ref) RepoID() string { return r.Owner + "/" + r.Repo }

// ParseRef parses a model reference. It does not touch the file system or
// the network.
func ParseRef(s string) (Ref, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Ref{}, fmt.Errorf("empty model reference (want a .gguf path, hf:OWNER/REPO[:QUANT] or an https:// URL)")
	}
	switch {
	case strings.HasPrefix(s, "hf:"):
		return parseHF(s)
	case hasSchemePrefix(s, "https://"), hasSchemePrefix(s, "http://"):
		u, err := url.Parse(s)
		if err != nil {
			return Ref{}, fmt.Errorf("model URL %q: %w", s, err)
		}
		if u.Host == "" {
			return Ref{}, fmt.Errorf("model URL %q has no host", s)
		}
		return Ref{Kind: URL, Raw: s, URL: u}, nil
	}
	// Any other scheme is a mistake, not a file name with "://" in it.
	if i := strings.Index(s, "://"); i > 0 && !strings.ContainsAny(s[:i], `/\.`) {
		return Ref{}, fmt.Errorf("model reference %q: unsupported scheme %q (use a path, hf:OWNER/REPO[:QUANT], http:// or https://)", s, s[:i])
	}
	return Ref{Kind: File, Raw: s, Path: s}, nil
}

func hasSchemePrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func parseHF(s string) (Ref, error) {
	body := strings.TrimPrefix(strings.TrimPrefix(s, "hf:"), "//")
	bad := func(why string) (Ref, error) {
		return Ref{}, fmt.Errorf("model reference %q: %s (want hf:OWNER/REPO or hf:OWNER/REPO:QUANT, e.g. %s)", s, why, DefaultModel)
	}
	repoPart, quant, _ := strings.Cut(body, ":")
	parts := strings.Split(repoPart, "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return bad("the repository must be OWNER/REPO")
	}
	for _, p := range parts {
		if !validRepoName(p) {
			return bad(fmt.Sprintf("%q is not a valid Hugging Face name", p))
		}
	}
	if strings.Contains(body, ":") && quant == "" {
		return bad("empty quantization after ':'")
	}
	if strings.ContainsAny(quant, `\`) || strings.Contains(quant, "..") {
		return bad(fmt.Sprintf("%q is not a quantization or file name", quant))
	}
	return Ref{Kind: HF, Raw: s, Owner: parts[0], Repo: parts[1], Quant: quant}, nil
}

// validRepoName follows the Hub's rule: letters, digits, '-', '_', '.'.
// Checking here keeps odd input from being spliced into API paths.
func validRepoName(s string) bool {
	if s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}
