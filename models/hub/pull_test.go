package hub

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"vkchat/models/hub/hubtest"
	"vkchat/models/store"
	"vkchat/runtime/gguf"
)

const (
	testRepo = "test-org/Tiny-135M-Instruct-GGUF"
	testFile = "Tiny-135M-Instruct-Q8_0.gguf"
	testRef  = "hf:" + testRepo
)

func init() {
	// Retries back off by this; keep the tests fast.
	retryDelay = time.Millisecond
}

// fakeHub serves testRepo with a Q8_0 and a Q4_K_M file; it returns the
// Q8_0 body (the default pick for a 135M model).
func fakeHub(t *testing.T) (*hubtest.Server, []byte) {
	t.Helper()
	s := hubtest.NewServer(t)
	q8 := hubtest.GGUF(t, 256, 256, map[string]any{"general.file_type": uint32(7)})
	q4 := hubtest.GGUF(t, 64, 256, map[string]any{"general.file_type": uint32(15)})
	s.AddRepo(testRepo,
		hubtest.File{Path: testFile, Data: q8},
		hubtest.File{Path: "Tiny-135M-Instruct-Q4_K_M.gguf", Data: q4},
		hubtest.File{Path: "README.md", Data: []byte("# tiny\n"), NoLFS: true},
	)
	return s, q8
}

func opts(s *hubtest.Server, dir string) Options {
	return Options{Dir: dir, Endpoint: s.URL}
}

func mustEqualFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d-byte source", path, len(got), len(want))
	}
}

// noPartials fails if a .partial or .etag file is left in dir.
func noPartials(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && (strings.HasSuffix(p, ".partial") || strings.HasSuffix(p, ".etag")) {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

func TestPullEndToEnd(t *testing.T) {
	s, src := fakeHub(t)
	dir := t.TempDir()
	t.Setenv("VKCHAT_MODELS", dir)
	t.Setenv("HF_ENDPOINT", s.URL)
	var reports []Progress
	p, err := Pull(context.Background(), testRef, Options{Progress: func(p Progress) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "test-org", "Tiny-135M-Instruct-GGUF", testFile)
	if p != want {
		t.Fatalf("path = %s, want %s", p, want)
	}
	mustEqualFile(t, p, src)
	noPartials(t, dir)
	if len(reports) == 0 {
		t.Fatal("no progress reports")
	}
	last := reports[len(reports)-1]
	if last.Done != int64(len(src)) || last.Total != int64(len(src)) || last.File != testFile {
		t.Errorf("last progress = %+v, want Done = Total = %d", last, len(src))
	}
	models, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 1 {
		t.Fatalf("store.List = %+v, want one model", models)
	}
	m := models[0]
	if m.Name != "test-org/Tiny-135M-Instruct-GGUF/Tiny-135M-Instruct-Q8_0" || m.Arch != "llama" || m.Quant != "Q8_0" ||
		m.Params != 256*256+256 || m.Size != int64(len(src)) || m.Path != p || m.Err != nil {
		t.Errorf("listed %+v", m)
	}

	// Pulled once, the model resolves without the network.
	s.Close()
	p2, err := Pull(context.Background(), testRef+":q8_0", Options{})
	if err != nil || p2 != p {
		t.Fatalf("offline re-pull = %q, %v; want %s", p2, err, p)
	}
	if p3, err := Pull(context.Background(), testRef, Options{}); err != nil || p3 != p {
		t.Fatalf("offline re-pull without quant = %q, %v", p3, err)
	}
}

func TestPullExplicitQuantAndRedirect(t *testing.T) {
	s, _ := fakeHub(t)
	s.Redirect = true
	s.PageSize = 1 // the listing arrives in pages too
	dir := t.TempDir()
	p, err := Pull(context.Background(), testRef+":Q4_K_M", opts(s, dir))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p) != "Tiny-135M-Instruct-Q4_K_M.gguf" {
		t.Fatalf("pulled %s", p)
	}
	var sawCDN bool
	for _, r := range s.Requests() {
		sawCDN = sawCDN || strings.HasPrefix(r.Path, "/cdn/")
	}
	if !sawCDN {
		t.Errorf("the redirect to /cdn/ was not followed: %+v", s.Requests())
	}
}

func TestPullNoMatchingQuant(t *testing.T) {
	s, _ := fakeHub(t)
	_, err := Pull(context.Background(), testRef+":Q5_K_M", opts(s, t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "available quantizations: Q4_K_M, Q8_0") {
		t.Fatalf("err = %v", err)
	}
}

func TestPullRefusesSplit(t *testing.T) {
	s := hubtest.NewServer(t)
	part := []byte("GGUF-part")
	s.AddRepo("o/Big-70B-GGUF",
		hubtest.File{Path: "Q8_0/Big-Q8_0-00001-of-00002.gguf", Data: part},
		hubtest.File{Path: "Q8_0/Big-Q8_0-00002-of-00002.gguf", Data: part})
	dir := t.TempDir()
	_, err := Pull(context.Background(), "hf:o/Big-70B-GGUF:Q8_0", opts(s, dir))
	if err == nil || !strings.Contains(err.Error(), "split into several files") || !strings.Contains(err.Error(), "llama-gguf-split --merge") {
		t.Fatalf("err = %v", err)
	}
	for _, r := range s.Requests() {
		if strings.Contains(r.Path, "/resolve/") {
			t.Errorf("downloaded a split part: %s", r.Path)
		}
	}
}

func TestPullResumesInterruptedTransfer(t *testing.T) {
	for _, redirect := range []bool{false, true} {
		s, src := fakeHub(t)
		s.Redirect = redirect
		half := int64(len(src) / 2)
		s.FailAfter, s.FailTimes = half, 1
		dir := t.TempDir()
		var logs []string
		o := opts(s, dir)
		o.Log = func(m string) { logs = append(logs, m) }
		p, err := Pull(context.Background(), testRef, o)
		if err != nil {
			t.Fatalf("redirect=%v: %v", redirect, err)
		}
		mustEqualFile(t, p, src)
		noPartials(t, dir)
		var ranges []string
		for _, r := range s.Requests() {
			if r.Range != "" {
				ranges = append(ranges, r.Range)
			}
		}
		if want := "bytes=" + formatInt(half) + "-"; len(ranges) == 0 || ranges[0] != want {
			t.Errorf("redirect=%v: resume ranges = %q", redirect, ranges)
		}
		if !strings.Contains(strings.Join(logs, "\n"), "resuming") {
			t.Errorf("no resume notice in %q", logs)
		}
	}
}

func TestPullResumesAcrossRuns(t *testing.T) {
	s, src := fakeHub(t)
	half := int64(len(src) / 3)
	s.FailAfter, s.FailTimes = half, 1
	dir := t.TempDir()
	o := opts(s, dir)
	o.Retries = -1
	_, err := Pull(context.Background(), testRef, o)
	if err == nil || !strings.Contains(err.Error(), "run the same command again to resume") {
		t.Fatalf("first run: err = %v, want an interruption that keeps the partial file", err)
	}
	partial := filepath.Join(dir, "test-org", "Tiny-135M-Instruct-GGUF", testFile+".partial")
	got, err := os.ReadFile(partial)
	if err != nil || !bytes.Equal(got, src[:half]) {
		t.Fatalf("partial file: %d bytes, %v; want the first %d source bytes", len(got), err, half)
	}
	p, err := Pull(context.Background(), testRef, o)
	if err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, p, src)
	reqs := s.Requests()
	last := reqs[len(reqs)-1]
	if want := "bytes=" + formatInt(half) + "-"; last.Range != want || last.IfRange == "" {
		t.Errorf("resume request Range %q If-Range %q, want %q and the ETag", last.Range, last.IfRange, want)
	}
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

func TestPullServerIgnoresRange(t *testing.T) {
	s, src := fakeHub(t)
	s.FailAfter, s.FailTimes = int64(len(src)/2), 1
	s.IgnoreRange = true
	dir := t.TempDir()
	var logs []string
	o := opts(s, dir)
	o.Log = func(m string) { logs = append(logs, m) }
	p, err := Pull(context.Background(), testRef, o)
	if err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, p, src)
	if !strings.Contains(strings.Join(logs, "\n"), "does not support resuming; starting over") {
		t.Errorf("logs = %q", logs)
	}
}

func TestPullRangeNotSatisfiable(t *testing.T) {
	s, src := fakeHub(t)
	url := s.URL + "/" + testRepo + "/resolve/main/" + testFile
	host := strings.ReplaceAll(strings.TrimPrefix(s.URL, "http://"), ":", "_")

	// A complete .partial (a run that died before the rename): the server
	// says 416 for bytes past the end, and the file is finished locally.
	dir := t.TempDir()
	dest := filepath.Join(dir, host, testFile)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dest+".partial", src, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Pull(context.Background(), url, opts(s, dir))
	if err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, p, src)
	noPartials(t, dir)

	// A .partial longer than the file is stale: start over.
	dir = t.TempDir()
	dest = filepath.Join(dir, host, testFile)
	_ = os.MkdirAll(filepath.Dir(dest), 0o755)
	if err := os.WriteFile(dest+".partial", append(append([]byte{}, src...), "junk"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err = Pull(context.Background(), url, opts(s, dir)); err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, p, src)
}

func TestPullNotFound(t *testing.T) {
	s, _ := fakeHub(t)
	_, err := Pull(context.Background(), "hf:test-org/No-Such-Repo", opts(s, t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "repository test-org/No-Such-Repo not found") {
		t.Errorf("missing repo: err = %v", err)
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusUnauthorized {
		t.Errorf("missing repo: want a StatusError 401, got %#v", err)
	}
	_, err = Pull(context.Background(), s.URL+"/"+testRepo+"/resolve/main/missing.gguf", opts(s, t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "missing.gguf not found (HTTP 404") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestPullWrongContentLength(t *testing.T) {
	// Announcing more than the listing: refused before writing anything.
	s, src := fakeHub(t)
	s.LengthDelta = 1000
	dir := t.TempDir()
	_, err := Pull(context.Background(), testRef, opts(s, dir))
	if err == nil || !strings.Contains(err.Error(), "announced") {
		t.Errorf("hf: err = %v", err)
	}

	// A plain URL has no listing: the body ends short of the announced
	// length, which is an interruption, not a complete file.
	url := s.URL + "/" + testRepo + "/resolve/main/" + testFile
	o := opts(s, t.TempDir())
	o.Retries = -1
	_, err = Pull(context.Background(), url, o)
	if err == nil || !strings.Contains(err.Error(), "closed after "+formatInt(int64(len(src)))+" of the "+formatInt(int64(len(src))+1000)+" bytes announced") {
		t.Errorf("url, long: err = %v", err)
	}

	// Announcing less truncates the file, and validation rejects it.
	s.Set(func(s *hubtest.Server) { s.LengthDelta = -100 })
	dir = t.TempDir()
	_, err = Pull(context.Background(), url, opts(s, dir))
	if err == nil || !strings.Contains(err.Error(), "not a usable GGUF model, deleted the download") {
		t.Errorf("url, short: err = %v", err)
	}
	noPartials(t, dir)
	if models, _ := store.ListDir(dir); len(models) != 0 {
		t.Errorf("a truncated download was kept: %+v", models)
	}
}

func TestPullNonGGUFBody(t *testing.T) {
	s, _ := fakeHub(t)
	s.Body = []byte("<!DOCTYPE html><html><body>Please log in</body></html>")
	for _, ref := range []string{testRef, s.URL + "/" + testRepo + "/resolve/main/" + testFile} {
		dir := t.TempDir()
		_, err := Pull(context.Background(), ref, opts(s, dir))
		if err == nil || !strings.Contains(err.Error(), "did not send a GGUF file") || !strings.Contains(err.Error(), "text/html") {
			t.Errorf("%s: err = %v", ref, err)
		}
		noPartials(t, dir)
		if models, _ := store.ListDir(dir); len(models) != 0 {
			t.Errorf("%s: a non-GGUF body was kept: %+v", ref, models)
		}
	}
}

func TestPullSHA256Mismatch(t *testing.T) {
	s, src := fakeHub(t)
	s.FailAfter, s.FailTimes = int64(len(src)/2), 1
	dir := t.TempDir()
	o := opts(s, dir)
	o.Retries = -1
	if _, err := Pull(context.Background(), testRef, o); err == nil {
		t.Fatal("want the first run interrupted")
	}
	// Corrupt the kept prefix, as a disk error or a changed file would.
	partial := filepath.Join(dir, "test-org", "Tiny-135M-Instruct-GGUF", testFile+".partial")
	b, _ := os.ReadFile(partial)
	b[len(b)-1] ^= 0xff
	_ = os.WriteFile(partial, b, 0o644)
	_, err := Pull(context.Background(), testRef, o)
	if err == nil || !strings.Contains(err.Error(), "sha256 mismatch") {
		t.Fatalf("err = %v", err)
	}
	noPartials(t, dir)
}

func TestPullNoNetwork(t *testing.T) {
	s, _ := fakeHub(t)
	endpoint := s.URL
	s.Close()
	_, err := Pull(context.Background(), testRef, Options{Dir: t.TempDir(), Endpoint: endpoint})
	var ne *NetworkError
	host := strings.TrimPrefix(endpoint, "http://")
	if !errors.As(err, &ne) || ne.Host != host || !strings.Contains(err.Error(), "cannot reach "+host) ||
		!strings.Contains(err.Error(), "local .gguf file") {
		t.Fatalf("err = %v", err)
	}
}

func TestPullToken(t *testing.T) {
	s, src := fakeHub(t)
	s.Token = "secret"
	_, err := Pull(context.Background(), testRef, opts(s, t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "is gated") || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Fatalf("without token: err = %v", err)
	}
	t.Setenv("HF_TOKEN", "secret")
	p, err := Pull(context.Background(), testRef, opts(s, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, p, src)

	// A plain URL on another host never gets the token.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("token sent to a non-Hub host")
		}
		_, _ = w.Write(src)
	}))
	defer other.Close()
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/m.gguf"
	if _, err := Pull(context.Background(), otherURL, opts(s, t.TempDir())); err != nil {
		t.Fatal(err)
	}
}

func TestPullStalledBodyIsResumed(t *testing.T) {
	old := stallTimeout
	stallTimeout = 200 * time.Millisecond
	defer func() { stallTimeout = old }()
	_, src := fakeHub(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Length", formatInt(int64(len(src))))
			_, _ = w.Write(src[:1000])
			w.(http.Flusher).Flush()
			select { // hang, like a dead connection that never closes
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		http.ServeContent(w, r, "m.gguf", time.Time{}, bytes.NewReader(src))
	}))
	defer srv.Close()
	dir := t.TempDir()
	p, err := Pull(context.Background(), srv.URL+"/m.gguf", Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustEqualFile(t, p, src)
}

func TestPullCancelKeepsPartial(t *testing.T) {
	old := progressEvery
	progressEvery = 0
	defer func() { progressEvery = old }()
	_, src := fakeHub(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", formatInt(int64(len(src))))
		_, _ = w.Write(src[:5000])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	dir := t.TempDir()
	// Cancel once bytes are on disk, as Ctrl-C mid-download would.
	_, err := Pull(ctx, srv.URL+"/m.gguf", Options{Dir: dir, Progress: func(p Progress) {
		if p.Done > 0 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "kept in") {
		t.Fatalf("err = %v", err)
	}
}

func TestPullLocked(t *testing.T) {
	s, _ := fakeHub(t)
	dir := t.TempDir()
	d := filepath.Join(dir, "test-org", "Tiny-135M-Instruct-GGUF")
	_ = os.MkdirAll(d, 0o755)
	fd, err := os.OpenFile(filepath.Join(d, testFile+".partial"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, err = Pull(context.Background(), testRef, opts(s, dir))
	if err == nil || !strings.Contains(err.Error(), "already downloading") {
		t.Fatalf("err = %v", err)
	}
}

func TestPullLocalFile(t *testing.T) {
	_, src := fakeHub(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "m.gguf")
	_ = os.WriteFile(p, src, 0o644)
	got, err := Pull(context.Background(), p, Options{Dir: dir})
	if err != nil || got != p {
		t.Fatalf("Pull(file) = %q, %v", got, err)
	}
	// A store name works as a reference too.
	if got, err = Pull(context.Background(), "m", Options{Dir: dir}); err != nil || got != p {
		t.Fatalf("Pull(store name) = %q, %v", got, err)
	}
	bad := filepath.Join(dir, "bad.gguf")
	_ = os.WriteFile(bad, []byte("not a model"), 0o644)
	if _, err := Pull(context.Background(), bad, Options{Dir: dir}); !errors.Is(err, gguf.ErrFormat) {
		t.Errorf("bad file: err = %v", err)
	}
	_, err = Pull(context.Background(), "someone/Some-GGUF", Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "did you mean hf:someone/Some-GGUF?") {
		t.Errorf("missing: err = %v", err)
	}
}

func TestWriteErrDiskFull(t *testing.T) {
	err := writeErr("/m/x.gguf.partial", 10, 3<<20, &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "disk full writing /m/x.gguf.partial; 3.0 MiB more needed") {
		t.Errorf("err = %v", err)
	}
	if err := checkFreeSpace(t.TempDir(), 1<<62); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "not enough disk space") {
		t.Errorf("checkFreeSpace: %v", err)
	}
	if err := checkFreeSpace(t.TempDir(), 1); err != nil {
		t.Errorf("checkFreeSpace(1 byte): %v", err)
	}
}

func TestParseContentRange(t *testing.T) {
	for h, want := range map[string][3]int64{
		"bytes 0-9/10":    {0, 10, 1},
		"bytes 5-9/*":     {5, -1, 1},
		"bytes */10":      {-1, 10, 1},
		"bytes 5-10/10":   {0, 0, 0},
		"bytes 9-5/10":    {0, 0, 0},
		"items 0-1/2":     {0, 0, 0},
		"bytes x-1/2":     {0, 0, 0},
		"":                {0, 0, 0},
		" bytes 1-1/100 ": {1, 100, 1},
	} {
		s, n, ok := parseContentRange(h)
		if ok != (want[2] == 1) || (ok && (s != want[0] || n != want[1])) {
			t.Errorf("parseContentRange(%q) = %d, %d, %v; want %v", h, s, n, ok, want)
		}
	}
}
