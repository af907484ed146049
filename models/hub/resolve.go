package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// repoFile is one entry of the Hub's tree listing.
type repoFile struct {
	Type string `json:"type"` // "file" or "directory"
	Path string `json:"path"`
	Size int64  `json:"size"`
	LFS  *struct {
		Oid  string `json:"oid"` // sha256 of the content
		Size int64  `json:"size"`
	} `json:"lfs"`
}

// sha256 is the content hash the Hub publishes for LFS files ("" if none;
// the oid of a non-LFS file is a git blob hash, not a content hash).
func (f repoFile) sha256() string {
	if f.LFS != nil && len(f.LFS.Oid) == 64 {
		return strings.ToLower(f.LFS.Oid)
	}
	return ""
}

func (f repoFile) size() int64 {
	if f.LFS != nil && f.LFS.Size > 0 {
		return f.LFS.Size
	}
	return f.Size
}

// maxListPages bounds the tree pagination so a misbehaving server cannot
// keep us looping; GGUF repos have tens of files, the Hub pages at 1000.
const maxListPages = 50

// listRepo returns every file of the repo's main branch.
func (c *client) listRepo(ctx context.Context, r Ref) ([]repoFile, error) {
	next := c.endpoint + "/api/models/" + url.PathEscape(r.Owner) + "/" + url.PathEscape(r.Repo) + "/tree/main?recursive=true"
	var files []repoFile
	for page := 0; next != ""; page++ {
		if page == maxListPages {
			return nil, fmt.Errorf("list %s: more than %d pages of files", r.RepoID(), maxListPages)
		}
		req, err := c.newRequest(ctx, next, true)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := c.http.Do(req)
		if err != nil {
			return nil, c.transportErr(ctx, req.URL, err)
		}
		if resp.StatusCode != http.StatusOK {
			err := c.statusErr(resp, r, "")
			resp.Body.Close()
			return nil, err
		}
		var batch []repoFile
		// 64 MiB is far above any real listing; the limit keeps a broken
		// server from filling memory.
		err = json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&batch)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("list files of %s: bad response from %s: %w", r.RepoID(), req.URL.Host, err)
		}
		files = append(files, batch...)
		next = nextLink(resp.Header, req.URL)
	}
	return files, nil
}

// nextLink follows the Hub's pagination: Link: <url>; rel="next".
func nextLink(h http.Header, base *url.URL) string {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(part, ";")
			if !ok || !strings.Contains(strings.ReplaceAll(params, " ", ""), `rel="next"`) {
				continue
			}
			target = strings.Trim(strings.TrimSpace(target), "<>")
			u, err := base.Parse(target)
			if err != nil {
				return ""
			}
			return u.String()
		}
	}
	return ""
}

// quantRe matches a quantization token: Q4_K_M, q8_0, IQ4_XS, F16, BF16,
// TQ1_0, MXFP4_MOE.
var quantRe = regexp.MustCompile(`(?i)^(?:I?Q[1-8](?:_[A-Z0-9]+)*|TQ[1-2]_0|B?F16|F32|MXFP4(?:_MOE)?)$`)

// quantTailRe finds a token glued on with '_' ("model_q4_k_m"), which the
// '-'/'.' split cannot isolate.
var quantTailRe = regexp.MustCompile(`(?i)_((?:I?Q[1-8](?:_[A-Z0-9]+)*|TQ[1-2]_0|B?F16|F32))$`)

// splitRe matches llama.cpp's split naming: name-00001-of-00003.gguf.
var splitRe = regexp.MustCompile(`-(\d{5})-of-(\d{5})\.gguf$`)

// quantOf extracts the quantization from a GGUF file name, upper-cased, or
// "" when the name carries none.
func quantOf(name string) string {
	stem := strings.TrimSuffix(path.Base(name), path.Ext(name))
	stem = splitRe.ReplaceAllString(stem+".gguf", "")
	stem = strings.TrimSuffix(stem, ".gguf")
	pieces := strings.FieldsFunc(stem, func(r rune) bool { return r == '-' || r == '.' })
	for i := len(pieces) - 1; i >= 0; i-- {
		if quantRe.MatchString(pieces[i]) {
			return strings.ToUpper(pieces[i])
		}
	}
	if m := quantTailRe.FindStringSubmatch(stem); m != nil {
		return strings.ToUpper(m[1])
	}
	return ""
}

// unsupportedQuant reports quantizations whose tensor types vkchat's runtime
// does not know: downloading gigabytes only for validation to reject them
// would waste the user's time and bandwidth.
func unsupportedQuant(q string) bool {
	q = strings.ToUpper(q)
	return strings.HasPrefix(q, "IQ") || strings.HasPrefix(q, "TQ") || strings.HasPrefix(q, "MXFP4")
}

// candidate is a GGUF file of a repo.
type candidate struct {
	file  repoFile
	quant string
	split bool
}

func ggufCandidates(files []repoFile) []candidate {
	var out []candidate
	for _, f := range files {
		base := path.Base(f.Path)
		if f.Type == "directory" || !strings.HasSuffix(strings.ToLower(base), ".gguf") {
			continue
		}
		// Vision projectors and importance matrices are GGUF too but are
		// not chat models.
		lower := strings.ToLower(base)
		if strings.HasPrefix(lower, "mmproj") || strings.Contains(lower, "imatrix") {
			continue
		}
		out = append(out, candidate{file: f, quant: quantOf(f.Path), split: splitRe.MatchString(base)})
	}
	return out
}

// availableQuants lists the distinct quants, split files marked, sorted.
func availableQuants(cs []candidate) string {
	seen := map[string]bool{}
	var qs []string
	for _, c := range cs {
		q := c.quant
		if q == "" {
			q = path.Base(c.file.Path)
		}
		if c.split {
			q += " (split)"
		}
		if !seen[q] {
			seen[q] = true
			qs = append(qs, q)
		}
	}
	sort.Strings(qs)
	return strings.Join(qs, ", ")
}

// paramsRe finds a size in a model name: 135M, 0.5B, 1.7b, 8x7B.
var paramsRe = regexp.MustCompile(`(?i)(?:^|[-_.])(?:(\d+)x)?(\d+(?:\.\d+)?)([MB])(?:[-_.]|$)`)

// guessParams estimates the parameter count from a repo or file name; 0 when
// the name says nothing. The largest size mentioned wins, so Qwen3-30B-A3B
// counts as 30B, not its 3B active parameters.
func guessParams(name string) float64 {
	best := 0.0
	// Matches share their delimiters, so scan with overlapping positions.
	for i := 0; i < len(name); {
		loc := paramsRe.FindStringSubmatchIndex(name[i:])
		if loc == nil {
			break
		}
		m := func(k int) string {
			if loc[2*k] < 0 {
				return ""
			}
			return name[i+loc[2*k] : i+loc[2*k+1]]
		}
		x, _ := strconv.ParseFloat(m(2), 64)
		if n := m(1); n != "" {
			k, _ := strconv.ParseFloat(n, 64)
			x *= k
		}
		if strings.EqualFold(m(3), "M") {
			x *= 1e6
		} else {
			x *= 1e9
		}
		best = max(best, x)
		// Restart just before the trailing delimiter so "-1B-" can share its
		// '-' with the next size.
		i += max(loc[1]-1, loc[0]+1)
	}
	return best
}

// smallQ8Bytes is the Q8_0 file size below which a repo counts as a small
// model when its name gives no size: Q8_0 stores ~1.06 bytes per weight, so
// 1 GiB is about a billion parameters.
const smallQ8Bytes = 1 << 30

// Default preference orders. Small models lose too much at 4 bits and cost
// little at 8; big ones are only practical at ~4.5 bits.
var (
	smallPrefs = []string{"Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "F16", "BF16"}
	largePrefs = []string{"Q4_K_M", "Q4_K_S", "Q5_K_M", "Q4_0", "Q6_K", "Q8_0"}
)

// pickFile chooses the file of a repo for r.Quant (or the default quant).
func pickFile(r Ref, files []repoFile) (repoFile, error) {
	cs := ggufCandidates(files)
	if len(cs) == 0 {
		return repoFile{}, fmt.Errorf("%s has no .gguf files (is it a GGUF repository? try a repo whose name ends in -GGUF)", r.RepoID())
	}
	if strings.HasSuffix(strings.ToLower(r.Quant), ".gguf") {
		for _, c := range cs {
			if c.file.Path == r.Quant || path.Base(c.file.Path) == r.Quant {
				return checkUsable(r, c, cs)
			}
		}
		return repoFile{}, fmt.Errorf("%s has no file %q; its GGUF files are: %s", r.RepoID(), r.Quant, fileList(cs))
	}
	if r.Quant != "" {
		return pickQuant(r, r.Quant, cs, true)
	}
	if len(cs) == 1 {
		return checkUsable(r, cs[0], cs)
	}
	small := false
	if n := guessParams(r.Repo); n > 0 {
		small = n < 1e9
	} else {
		for _, c := range cs {
			if c.quant == "Q8_0" && !c.split && c.file.size() > 0 && c.file.size() < smallQ8Bytes {
				small = true
			}
		}
	}
	prefs := largePrefs
	if small {
		prefs = smallPrefs
	}
	for _, q := range prefs {
		if f, err := pickQuant(r, q, cs, false); err == nil {
			return f, nil
		}
	}
	return repoFile{}, fmt.Errorf("%s: no default quantization found (tried %s); available: %s; pick one with hf:%s:QUANT",
		r.RepoID(), strings.Join(prefs, ", "), availableQuants(cs), r.RepoID())
}

// pickQuant picks the single-file GGUF whose quant is q. explicit says the
// user asked for q, so failures explain themselves fully.
func pickQuant(r Ref, q string, cs []candidate, explicit bool) (repoFile, error) {
	var exact, splits []candidate
	for _, c := range cs {
		if !strings.EqualFold(c.quant, q) {
			continue
		}
		if c.split {
			splits = append(splits, c)
		} else {
			exact = append(exact, c)
		}
	}
	if len(exact) == 0 && len(splits) == 0 && explicit {
		// Fall back to a substring of the name, so "q4_k" finds the one
		// Q4_K_M file of a repo that has no Q4_K_S.
		for _, c := range cs {
			if strings.Contains(strings.ToLower(path.Base(c.file.Path)), strings.ToLower(q)) {
				if c.split {
					splits = append(splits, c)
				} else {
					exact = append(exact, c)
				}
			}
		}
	}
	if len(exact) == 0 {
		if len(splits) > 0 {
			return repoFile{}, splitErr(r, q, splits, cs)
		}
		return repoFile{}, fmt.Errorf("%s has no %s file; available quantizations: %s", r.RepoID(), q, availableQuants(cs))
	}
	// Prefer the file nearest the repo root, then the shortest name: repos
	// that keep variants in subfolders put the plain one at the top.
	sort.SliceStable(exact, func(i, j int) bool {
		di, dj := strings.Count(exact[i].file.Path, "/"), strings.Count(exact[j].file.Path, "/")
		if di != dj {
			return di < dj
		}
		return len(exact[i].file.Path) < len(exact[j].file.Path)
	})
	if len(exact) > 1 && strings.Count(exact[0].file.Path, "/") == strings.Count(exact[1].file.Path, "/") &&
		len(exact[0].file.Path) == len(exact[1].file.Path) {
		return repoFile{}, fmt.Errorf("%s has several %s files (%s); name one with hf:%s:FILE.gguf", r.RepoID(), q, fileList(exact), r.RepoID())
	}
	return checkUsable(r, exact[0], cs)
}

func checkUsable(r Ref, c candidate, cs []candidate) (repoFile, error) {
	if c.split {
		return repoFile{}, splitErr(r, c.quant, []candidate{c}, cs)
	}
	if unsupportedQuant(c.quant) {
		return repoFile{}, fmt.Errorf("%s: vkchat cannot run %s files (%s) yet; pick a Q4_K_M, Q8_0 or similar quantization; available: %s",
			r.RepoID(), c.quant, path.Base(c.file.Path), availableQuants(cs))
	}
	return c.file, nil
}

func splitErr(r Ref, q string, splits, cs []candidate) error {
	return fmt.Errorf("%s: %s is split into several files (%s); vkchat loads single-file GGUFs only: "+
		"merge the parts with 'llama-gguf-split --merge FIRST-PART OUT.gguf' and pass the path, or pick another quantization (available: %s)",
		r.RepoID(), q, fileList(splits), availableQuants(cs))
}

func fileList(cs []candidate) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.file.Path
	}
	sort.Strings(names)
	if len(names) > 6 {
		names = append(names[:6], fmt.Sprintf("… %d more", len(names)-6))
	}
	return strings.Join(names, ", ")
}
