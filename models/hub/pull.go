package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"vkchat/models/store"
	"vkchat/runtime/gguf"
)

// Options configures Pull. The zero value pulls into store.Dir() from
// $HF_ENDPOINT (or the Hub) with no progress reports.
type Options struct {
	Dir        string         // store directory; "" means store.Dir()
	Progress   func(Progress) // called a few times a second while downloading, and once at the end
	HTTPClient *http.Client   // nil: a client with connect timeouts and no overall timeout
	Endpoint   string         // Hub endpoint; "" means $HF_ENDPOINT, else DefaultEndpoint
	Log        func(string)   // one-line notices: "resuming at …", "already downloaded"; nil discards
	// Retries is how many times an interrupted transfer is resumed within one
	// Pull before it gives up and leaves the .partial file for the next run.
	// 0 means the default (3); negative means never.
	Retries int
}

// Progress is one progress report of a download.
type Progress struct {
	File  string        // base name of the file being downloaded
	Done  int64         // bytes on disk, including a resumed prefix
	Total int64         // -1 when the server does not say
	Rate  float64       // bytes per second, smoothed, over this run only
	ETA   time.Duration // 0 when unknown
}

const defaultRetries = 3

// Tunables, variables so tests can make them fast.
var (
	retryDelay    = time.Second      // grows linearly with each retry
	stallTimeout  = 60 * time.Second // a body that sends nothing this long is abandoned and resumed
	progressEvery = 200 * time.Millisecond
)

// Pull makes the model ref names available locally and returns its path.
//
// A file path (or the name of a model already in the store) is validated
// and returned. An hf: ref or URL whose file is already in the store is
// returned without a download; otherwise the file is downloaded to
// <file>.partial (resuming one left by an earlier run), checked for length,
// sha256 (when the Hub publishes it) and GGUF validity, and only then
// renamed into place. A failed validation deletes the download.
func Pull(ctx context.Context, ref string, opts Options) (string, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return "", err
	}
	dir := opts.Dir
	if dir == "" {
		dir = store.Dir()
	}
	// Callers keep the returned path; make it independent of the cwd.
	if a, err := filepath.Abs(dir); err == nil {
		dir = a
	}
	if r.Kind == File {
		return openLocal(r.Path, dir)
	}
	c, err := newClient(opts)
	if err != nil {
		return "", err
	}
	var t target
	switch r.Kind {
	case HF:
		if p := localHF(dir, r); p != "" {
			opts.log(fmt.Sprintf("%s is already downloaded: %s", r, p))
			return p, nil
		}
		files, err := c.listRepo(ctx, r)
		if err != nil {
			return "", err
		}
		f, err := pickFile(r, files)
		if err != nil {
			return "", err
		}
		t = target{
			ref:     r,
			file:    f.Path,
			url:     c.endpoint + "/" + url.PathEscape(r.Owner) + "/" + url.PathEscape(r.Repo) + "/resolve/main/" + escapePath(f.Path),
			dest:    filepath.Join(dir, r.Owner, r.Repo, path.Base(f.Path)),
			size:    f.size(),
			sha256:  f.sha256(),
			hubAuth: true,
		}
	case URL:
		t = target{ref: r, url: r.URL.String(), dest: filepath.Join(dir, safeName(r.URL.Host), urlFileName(r.URL)), size: -1, hubAuth: c.isHub(r.URL)}
	}
	if st, err := os.Stat(t.dest); err == nil && st.Mode().IsRegular() && (t.size < 0 || st.Size() == t.size) {
		if err := validate(t.dest); err == nil {
			opts.log(fmt.Sprintf("%s is already downloaded: %s", r, t.dest))
			return t.dest, nil
		}
		// An invalid file in the store is replaced by the fresh download.
	}
	return c.fetch(ctx, t, opts)
}

func (o Options) log(s string) {
	if o.Log != nil {
		o.Log(s)
	}
}

func (o Options) retries() int {
	switch {
	case o.Retries < 0:
		return 0
	case o.Retries == 0:
		return defaultRetries
	}
	return o.Retries
}

// target is one file to download.
type target struct {
	ref     Ref
	file    string // path in the repo (HF only), for error messages
	url     string
	dest    string
	size    int64  // expected size, -1 unknown
	sha256  string // expected hex digest, "" unknown
	hubAuth bool   // send HF_TOKEN
}

func (t target) what() string {
	if t.file != "" {
		return fmt.Sprintf("%s from %s", t.file, t.ref.RepoID())
	}
	return t.url
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// safeName makes a host usable as a directory name on every OS (no ':').
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ':' || r == '/' || r == '\\' {
			return '_'
		}
		return r
	}, s)
}

// urlFileName is the last path element of u, with .gguf ensured so the
// store lists it.
func urlFileName(u *url.URL) string {
	name := path.Base(u.Path)
	if name == "." || name == "/" || name == "" {
		name = "model"
	}
	name = safeName(name)
	if !strings.HasSuffix(strings.ToLower(name), store.Ext) {
		name += store.Ext
	}
	return name
}

// openLocal validates a local file. A name that is not a file but matches a
// model in the store resolves to it, so "vkchat chat SmolLM2" works too.
func openLocal(p, dir string) (string, error) {
	st, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		if models, lerr := store.ListDir(dir); lerr == nil {
			if m, ferr := store.Find(models, p); ferr == nil && m.Err == nil {
				return m.Path, nil
			}
		}
		hint := ""
		if strings.Count(p, "/") == 1 && !strings.HasSuffix(strings.ToLower(p), store.Ext) {
			hint = fmt.Sprintf(" (did you mean hf:%s?)", p)
		}
		return "", fmt.Errorf("model %s: no such file and no such model in %s%s", p, dir, hint)
	}
	if err != nil {
		return "", fmt.Errorf("model %s: %w", p, err)
	}
	if st.IsDir() {
		return "", fmt.Errorf("model %s is a directory, not a .gguf file", p)
	}
	if err := validate(p); err != nil {
		return "", err
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	return p, nil
}

// localHF finds an already pulled file for r without the network, so a
// pulled model keeps working offline. It only answers when the choice is
// unambiguous: the named file, the one file of the requested quant, or, with
// no quant given, the only model of that repo.
func localHF(dir string, r Ref) string {
	repoDir := filepath.Join(dir, r.Owner, r.Repo)
	entries, err := os.ReadDir(repoDir)
	if err != nil {
		return ""
	}
	var found []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, store.Ext) {
			continue
		}
		switch {
		case strings.HasSuffix(strings.ToLower(r.Quant), store.Ext):
			if n == path.Base(r.Quant) {
				found = append(found, n)
			}
		case r.Quant != "":
			if strings.EqualFold(quantOf(n), r.Quant) {
				found = append(found, n)
			}
		default:
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		return ""
	}
	p := filepath.Join(repoDir, found[0])
	if validate(p) != nil {
		return ""
	}
	return p
}

// validate is the gate a file must pass to count as a model.
func validate(p string) error {
	f, err := gguf.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Architecture(); err != nil {
		return err
	}
	return nil
}

// errRestart asks fetch to start the file over (not counted as a retry).
var errRestart = errors.New("restart download")

// retryableError marks a transfer that broke after making progress.
type retryableError struct{ err error }

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

// fetch downloads t into t.dest via t.dest+".partial".
func (c *client) fetch(ctx context.Context, t target, opts Options) (string, error) {
	if err := os.MkdirAll(filepath.Dir(t.dest), 0o755); err != nil {
		return "", fmt.Errorf("create model directory: %w", err)
	}
	partial := t.dest + ".partial"
	fd, err := os.OpenFile(partial, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", partial, err)
	}
	defer fd.Close()
	// Two pulls of one file would interleave writes into one .partial.
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return "", fmt.Errorf("another vkchat is already downloading %s (lock on %s)", path.Base(t.dest), partial)
		}
		return "", fmt.Errorf("lock %s: %w", partial, err)
	}
	d := &download{c: c, t: t, opts: opts, fd: fd, partial: partial}
	if t.sha256 != "" {
		d.hash = sha256.New()
	}
	retries, restarts := opts.retries(), 0
	for attempt := 0; ; {
		err := d.attempt(ctx)
		if err == nil {
			break
		}
		if errors.Is(err, errRestart) && restarts < 2 {
			restarts++
			continue
		}
		var re *retryableError
		var ne *NetworkError
		// Once a transfer has broken, the network failing to reconnect at
		// once is part of the same outage: keep trying for the few retries.
		retryable := errors.As(err, &re) || (attempt > 0 && errors.As(err, &ne))
		if !retryable || attempt >= retries || ctx.Err() != nil {
			return "", d.keepNote(err)
		}
		attempt++
		opts.log(fmt.Sprintf("%v; resuming (retry %d of %d)", err, attempt, retries))
		select {
		case <-time.After(time.Duration(attempt) * retryDelay):
		case <-ctx.Done():
			return "", d.keepNote(fmt.Errorf("download of %s: %w", t.what(), ctx.Err()))
		}
	}
	return d.finish()
}

// download is the state of one fetch across attempts.
type download struct {
	c       *client
	t       target
	opts    Options
	fd      *os.File
	partial string
	hash    hash.Hash // nil when no digest is published
	hashed  int64     // bytes of the partial file fed to hash
	noRange bool      // the server mishandled Range: always start over
}

// keepNote tells the user a resumable partial file was kept.
func (d *download) keepNote(err error) error {
	if st, serr := d.fd.Stat(); serr == nil && st.Size() > 0 {
		return fmt.Errorf("%w\n(%s downloaded so far is kept in %s; run the same command again to resume)", err, store.FormatSize(st.Size()), d.partial)
	}
	d.discard()
	return err
}

// discard deletes the partial download and its ETag.
func (d *download) discard() {
	_ = d.fd.Truncate(0)
	_ = os.Remove(d.partial)
	_ = os.Remove(d.partial + ".etag")
}

func (d *download) reset() error {
	if err := d.fd.Truncate(0); err != nil {
		return fmt.Errorf("truncate %s: %w", d.partial, err)
	}
	if d.hash != nil {
		d.hash.Reset()
		d.hashed = 0
	}
	return nil
}

// attempt makes one request and appends what it receives.
func (d *download) attempt(ctx context.Context) error {
	t := d.t
	st, err := d.fd.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", d.partial, err)
	}
	offset := st.Size()
	if d.noRange || (t.size >= 0 && offset > t.size) {
		if err := d.reset(); err != nil {
			return err
		}
		offset = 0
	}
	if t.size >= 0 && offset == t.size && offset > 0 {
		return nil // a previous run got every byte but did not finish
	}

	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := d.c.newRequest(actx, t.url, t.hubAuth)
	if err != nil {
		return err
	}
	// Identity encoding: with gzip the Range offsets would count compressed
	// bytes, not bytes of the file on disk.
	req.Header.Set("Accept-Encoding", "identity")
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
		// If-Range makes a server whose file changed send the new one whole
		// instead of splicing its tail onto our old prefix.
		if etag, err := os.ReadFile(d.partial + ".etag"); err == nil && isStrongETag(string(etag)) {
			req.Header.Set("If-Range", string(etag))
		}
		d.opts.log(fmt.Sprintf("resuming %s at %s", path.Base(t.dest), store.FormatSize(offset)))
	}
	resp, err := d.c.http.Do(req)
	if err != nil {
		return d.c.transportErr(ctx, req.URL, err)
	}
	defer resp.Body.Close()

	total := int64(-1)
	switch resp.StatusCode {
	case http.StatusOK:
		if offset > 0 {
			d.opts.log("the server does not support resuming; starting over")
			if err := d.reset(); err != nil {
				return err
			}
			offset = 0
		}
		total = resp.ContentLength
	case http.StatusPartialContent:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			d.opts.log(fmt.Sprintf("the server answered the resume request with an unusable range %q; starting over", resp.Header.Get("Content-Range")))
			d.noRange = true
			return errRestart
		}
		total = size
		if total < 0 && resp.ContentLength >= 0 {
			total = offset + resp.ContentLength
		}
	case http.StatusRequestedRangeNotSatisfiable:
		// Our prefix is at or past the end: complete if the sizes agree
		// (a previous run died before the rename), else stale.
		if _, size, ok := parseContentRange(resp.Header.Get("Content-Range")); ok && size == offset && offset > 0 {
			return nil
		}
		d.noRange = true
		return errRestart
	default:
		return d.c.statusErr(resp, t.ref, t.file)
	}
	if total < 0 {
		total = t.size
	}
	bs := &stream{body: resp.Body, host: resp.Request.URL.Host}
	// The idle timer cancels the request when the body stalls: a TCP
	// connection can stay open with nothing flowing for hours.
	bs.idle = time.AfterFunc(stallTimeout, func() { bs.stalled.Store(true); cancel() })
	defer bs.idle.Stop()
	if offset == 0 {
		// Reject an HTML error page or the like before anything else: its
		// length or a size mismatch would only hide what went wrong.
		head := make([]byte, 4)
		n, err := io.ReadFull(bs.body, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return d.readErr(ctx, bs, 0, total, err)
		}
		if string(head[:n]) != "GGUF" {
			d.discard()
			what := fmt.Sprintf("a body starting with %q", head[:n])
			if n == 0 {
				what = "an empty body"
			}
			return fmt.Errorf("%s: %s did not send a GGUF file (%s, Content-Type %q); nothing was saved",
				t.what(), bs.host, what, resp.Header.Get("Content-Type"))
		}
		bs.body = io.MultiReader(bytes.NewReader(head), bs.body)
	}
	if t.size >= 0 && total >= 0 && total != t.size {
		return fmt.Errorf("%s: the server announced %d bytes but the repository lists %d; the file may have changed, try again",
			t.what(), total, t.size)
	}
	if offset == 0 {
		d.saveETag(resp.Header.Get("ETag"))
	}
	if total >= 0 {
		if err := checkFreeSpace(filepath.Dir(t.dest), total-offset); err != nil {
			return err
		}
	}
	if err := d.syncHash(offset); err != nil {
		return err
	}
	return d.copyBody(ctx, bs, offset, total)
}

// stream is a response body being copied, with its stall watchdog.
type stream struct {
	body    io.Reader
	host    string
	idle    *time.Timer
	stalled atomic.Bool
}

// copyBody streams the body to the partial file at offset.
func (d *download) copyBody(ctx context.Context, st *stream, offset, total int64) error {
	rep := newReporter(path.Base(d.t.dest), offset, total, d.opts.Progress)
	buf := make([]byte, 1<<20)
	pos := offset
	for {
		n, rerr := st.body.Read(buf)
		if n > 0 {
			st.idle.Reset(stallTimeout)
			if _, err := d.fd.WriteAt(buf[:n], pos); err != nil {
				return writeErr(d.partial, pos, total, err)
			}
			if d.hash != nil {
				d.hash.Write(buf[:n])
				d.hashed += int64(n)
			}
			pos += int64(n)
			rep.update(pos)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			rep.flush(pos)
			err := d.readErr(ctx, st, pos, total, rerr)
			if pos > offset {
				return &retryableError{err}
			}
			return err
		}
	}
	rep.flush(pos)
	if total >= 0 && pos != total {
		return &retryableError{fmt.Errorf("%s: transfer ended after %d of %d bytes", d.t.what(), pos, total)}
	}
	return nil
}

func (d *download) readErr(ctx context.Context, st *stream, pos, total int64, err error) error {
	host := st.host
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("download of %s stopped: %w", d.t.what(), ctx.Err())
	case st.stalled.Load():
		return fmt.Errorf("download of %s: no data from %s for %v", d.t.what(), host, stallTimeout)
	case errors.Is(err, io.ErrUnexpectedEOF) && total >= 0:
		return fmt.Errorf("download of %s: connection to %s closed after %d of the %d bytes announced", d.t.what(), host, pos, total)
	}
	return fmt.Errorf("download of %s from %s interrupted after %d bytes: %w", d.t.what(), host, pos, err)
}

func writeErr(p string, pos, total int64, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		need := ""
		if total > pos {
			need = fmt.Sprintf("; %s more needed", store.FormatSize(total-pos))
		}
		return fmt.Errorf("disk full writing %s%s: free some space and run the command again to resume: %w", p, need, err)
	}
	return fmt.Errorf("write %s: %w", p, err)
}

// checkFreeSpace fails early, before a long download that cannot fit.
func checkFreeSpace(dir string, need int64) error {
	var st syscall.Statfs_t
	if need <= 0 || syscall.Statfs(dir, &st) != nil {
		return nil // unknown: let the write report ENOSPC if it happens
	}
	free := int64(uint64(st.Bavail) * uint64(st.Bsize))
	if free >= 0 && free < need {
		return fmt.Errorf("not enough disk space in %s: the download needs %s, %s is free: %w",
			dir, store.FormatSize(need), store.FormatSize(free), syscall.ENOSPC)
	}
	return nil
}

func (d *download) saveETag(etag string) {
	p := d.partial + ".etag"
	if isStrongETag(etag) {
		_ = os.WriteFile(p, []byte(etag), 0o644)
	} else {
		_ = os.Remove(p)
	}
}

// isStrongETag: If-Range only works with strong validators (RFC 9110 13.1.5).
func isStrongETag(s string) bool {
	return len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"'
}

// syncHash makes the running digest cover exactly the first offset bytes
// of the partial file, rereading them when a previous run wrote them.
func (d *download) syncHash(offset int64) error {
	if d.hash == nil || d.hashed == offset {
		return nil
	}
	d.hash.Reset()
	d.hashed = 0
	if _, err := io.Copy(d.hash, io.NewSectionReader(d.fd, 0, offset)); err != nil {
		return fmt.Errorf("read %s to resume its checksum: %w", d.partial, err)
	}
	d.hashed = offset
	return nil
}

// finish verifies the complete partial file and renames it into place.
func (d *download) finish() (string, error) {
	t := d.t
	st, err := d.fd.Stat()
	if err != nil {
		return "", fmt.Errorf("stat %s: %w", d.partial, err)
	}
	if t.size >= 0 && st.Size() != t.size {
		d.discard()
		return "", fmt.Errorf("%s: downloaded %d bytes but the repository lists %d; deleted the download", t.what(), st.Size(), t.size)
	}
	if d.hash != nil {
		if err := d.syncHash(st.Size()); err != nil {
			return "", err
		}
		if got := hex.EncodeToString(d.hash.Sum(nil)); got != t.sha256 {
			d.discard()
			return "", fmt.Errorf("%s: sha256 mismatch (got %s, the repository lists %s); deleted the download, run the command again",
				t.what(), got, t.sha256)
		}
	}
	if err := d.fd.Sync(); err != nil {
		return "", fmt.Errorf("sync %s: %w", d.partial, err)
	}
	if err := validate(d.partial); err != nil {
		d.discard()
		return "", fmt.Errorf("%s is not a usable GGUF model, deleted the download: %w", t.what(), err)
	}
	if err := os.Rename(d.partial, t.dest); err != nil {
		return "", fmt.Errorf("move the download into place: %w", err)
	}
	_ = os.Remove(d.partial + ".etag")
	return t.dest, nil
}

// parseContentRange reads "bytes START-END/SIZE" or "bytes */SIZE"; size is
// -1 for "*". ok is false when the header is malformed.
func parseContentRange(h string) (start, size int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, sz, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	size = -1
	if sz != "*" {
		n, err := strconv.ParseInt(sz, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false
		}
		size = n
	}
	if rng == "*" {
		return -1, size, true
	}
	a, b, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseInt(a, 10, 64)
	e, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || s < 0 || e < s || (size >= 0 && e >= size) {
		return 0, 0, false
	}
	return s, size, true
}
