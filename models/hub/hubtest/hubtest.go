// Package hubtest is a fake Hugging Face Hub for tests: it serves the tree
// listing and resolve endpoints vkchat uses from files held in memory, and
// can misbehave on demand (drop connections, ignore Range, lie about
// lengths, redirect). It also builds small valid GGUF files to serve.
package hubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// File is one file of a fake repo.
type File struct {
	Path string
	Data []byte
	// Size overrides the size the listing reports (0: len(Data)), so a
	// test can list a multi-gigabyte file without holding it.
	Size int64
	// NoLFS lists the file without an lfs entry (no sha256 published).
	NoLFS bool
}

// Request is one request the server saw.
type Request struct {
	Path          string
	Range         string
	IfRange       string
	Authorization string
}

// Server is the fake Hub. Set the knobs before the requests they affect;
// they are read under the server's lock.
type Server struct {
	*httptest.Server

	mu    sync.Mutex
	repos map[string][]File
	reqs  []Request

	// Redirect makes resolve answer 302 to /cdn/..., as the Hub sends
	// downloads to its CDN.
	Redirect bool
	// IgnoreRange serves the whole file with 200 whatever Range says.
	IgnoreRange bool
	// FailAfter, when > 0, makes the next FailTimes downloads send the
	// full Content-Length header but only FailAfter body bytes, then drop
	// the connection.
	FailAfter int64
	FailTimes int
	// LengthDelta is added to the Content-Length header of downloads
	// (the body is unchanged), emulating a server that lies.
	LengthDelta int64
	// Body, when non-nil, replaces every download's body (e.g. an HTML
	// error page served with 200).
	Body []byte
	// Token, when set, is required as "Bearer TOKEN" on API calls.
	Token string
	// PageSize, when > 0, paginates the tree listing with Link headers.
	PageSize int
}

// NewServer starts a fake Hub, closed when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{repos: map[string][]File{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// AddRepo adds (or replaces) a repo "owner/name" with files.
func (s *Server) AddRepo(id string, files ...File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[id] = files
}

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Set runs f under the server's lock, to change knobs while requests may
// be in flight.
func (s *Server) Set(f func(s *Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Path: r.URL.Path, Range: r.Header.Get("Range"), IfRange: r.Header.Get("If-Range"), Authorization: r.Header.Get("Authorization")})
	s.mu.Unlock()
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/api/models/"):
		s.serveTree(w, r, strings.TrimPrefix(p, "/api/models/"))
	case strings.HasPrefix(p, "/cdn/"):
		s.serveFile(w, r, strings.TrimPrefix(p, "/cdn/"))
	case strings.Contains(p, "/resolve/main/"):
		s.mu.Lock()
		redirect := s.Redirect
		s.mu.Unlock()
		repoFile := strings.Replace(strings.TrimPrefix(p, "/"), "/resolve/main/", "/", 1)
		if redirect {
			http.Redirect(w, r, "/cdn/"+repoFile, http.StatusFound)
			return
		}
		s.serveFile(w, r, repoFile)
	default:
		http.NotFound(w, r)
	}
}

// serveTree answers /api/models/OWNER/REPO/tree/main.
func (s *Server) serveTree(w http.ResponseWriter, r *http.Request, rest string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token {
		w.Header().Set("X-Error-Code", "GatedRepo")
		http.Error(w, `{"error":"Access to this repo is restricted"}`, http.StatusForbidden)
		return
	}
	id, ok := strings.CutSuffix(rest, "/tree/main")
	files, found := s.repos[id]
	if !ok || !found {
		// The real Hub answers 401 to anonymous requests for missing repos.
		w.Header().Set("X-Error-Code", "RepoNotFound")
		http.Error(w, `{"error":"Repository not found"}`, http.StatusUnauthorized)
		return
	}
	type lfs struct {
		Oid  string `json:"oid"`
		Size int64  `json:"size"`
	}
	type entry struct {
		Type string `json:"type"`
		Oid  string `json:"oid"`
		Size int64  `json:"size"`
		Path string `json:"path"`
		LFS  *lfs   `json:"lfs,omitempty"`
	}
	var entries []entry
	dirs := map[string]bool{}
	for _, f := range files {
		if d := filepath.Dir(f.Path); d != "." && !dirs[d] {
			dirs[d] = true
			entries = append(entries, entry{Type: "directory", Path: d, Oid: "0"})
		}
		size := f.Size
		if size == 0 {
			size = int64(len(f.Data))
		}
		sum := sha256.Sum256(f.Data)
		e := entry{Type: "file", Path: f.Path, Size: size, Oid: "0123456789abcdef0123456789abcdef01234567"}
		if !f.NoLFS {
			e.LFS = &lfs{Oid: hex.EncodeToString(sum[:]), Size: size}
		}
		entries = append(entries, e)
	}
	if s.PageSize > 0 {
		start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		end := min(start+s.PageSize, len(entries))
		if end < len(entries) {
			q := r.URL.Query()
			q.Set("cursor", strconv.Itoa(end))
			w.Header().Set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, r.URL.Path, q.Encode()))
		}
		entries = entries[min(start, end):end]
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(entries)
}

// serveFile serves OWNER/REPO/PATH honoring the misbehaviour knobs.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, repoPath string) {
	s.mu.Lock()
	var data []byte
	found := false
	for id, files := range s.repos {
		for _, f := range files {
			if id+"/"+f.Path == repoPath {
				data, found = f.Data, true
			}
		}
	}
	body, ignoreRange, delta := s.Body, s.IgnoreRange, s.LengthDelta
	failAfter := int64(0)
	if s.FailAfter > 0 && s.FailTimes > 0 {
		failAfter = s.FailAfter
		s.FailTimes--
	}
	s.mu.Unlock()
	if !found {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	if body != nil {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		data = body
	}
	sum := sha256.Sum256(data)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Accept-Ranges", "bytes")

	start := int64(0)
	status := http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" && !ignoreRange {
		ir := r.Header.Get("If-Range")
		if ir == "" || ir == etag {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"), 10, 64)
			if err != nil {
				http.Error(w, "bad range", http.StatusBadRequest)
				return
			}
			if n >= int64(len(data)) {
				w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
				w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
				return
			}
			start, status = n, http.StatusPartialContent
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(data)-1, len(data)))
		}
	}
	part := data[start:]
	w.Header().Set("Content-Length", strconv.FormatInt(int64(len(part))+delta, 10))
	w.WriteHeader(status)
	if failAfter > 0 && failAfter < int64(len(part)) {
		_, _ = w.Write(part[:failAfter])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		// Drop the connection mid-body, as a network failure would.
		panic(http.ErrAbortHandler)
	}
	if delta < 0 {
		// net/http refuses to write past Content-Length; send what fits.
		part = part[:max(0, int64(len(part))+delta)]
	}
	_, _ = w.Write(part)
	if delta > 0 {
		// The client is still waiting for the announced bytes: close.
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
}

// GGUF returns a small valid GGUF model (llama architecture, F32 tensors
// of about rows*cols*4 bytes in all) with kv added to its metadata.
func GGUF(t testing.TB, rows, cols uint64, kv map[string]any) []byte {
	t.Helper()
	w := gguf.NewWriter()
	w.Set("general.architecture", "llama")
	w.Set("general.name", "hubtest")
	w.Set("llama.embedding_length", uint32(cols))
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.Set(k, kv[k])
	}
	if err := w.AddTensor("token_embd.weight", ggml.F32, []uint64{cols, rows}, floats(rows*cols, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("output_norm.weight", ggml.F32, []uint64{cols}, floats(cols, 2)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "model.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// floats encodes n float32 values that differ byte to byte, so a splice
// at the wrong offset cannot go unnoticed.
func floats(n uint64, seed float64) []byte {
	b := make([]byte, 4*n)
	for i := uint64(0); i < n; i++ {
		bits := math.Float32bits(float32(math.Sin(float64(i)*0.37 + seed)))
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	}
	return b
}
