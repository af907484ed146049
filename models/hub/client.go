package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultEndpoint is the Hugging Face Hub; $HF_ENDPOINT overrides it (for a
// mirror, or a test server).
const DefaultEndpoint = "https://huggingface.co"

const userAgent = "vkchat (+https://github.com/vkchat)"

// client carries what every request of one Pull needs.
type client struct {
	http     *http.Client
	endpoint string // no trailing slash
	token    string // $HF_TOKEN
}

func newClient(opts Options) (*client, error) {
	ep := opts.Endpoint
	if ep == "" {
		ep = os.Getenv("HF_ENDPOINT")
	}
	if ep == "" {
		ep = DefaultEndpoint
	}
	ep = strings.TrimRight(ep, "/")
	if u, err := url.Parse(ep); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("hub endpoint %q (from HF_ENDPOINT or options) must be an http(s) URL", ep)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	return &client{http: hc, endpoint: ep, token: strings.TrimSpace(os.Getenv("HF_TOKEN"))}, nil
}

// defaultHTTPClient has no overall timeout (a model download takes as long
// as it takes) but bounds each phase of connecting, so a dead network fails
// in seconds instead of hanging; stalls mid-body are caught by the download
// loop's idle timer.
func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 30 * time.Second
	tr.ResponseHeaderTimeout = 60 * time.Second
	return &http.Client{Transport: tr}
}

// newRequest builds a GET. hubAuth says the URL belongs to the Hub, so the
// token may be sent; a plain URL elsewhere never sees it. (net/http already
// drops Authorization when a redirect leaves the host, e.g. to the CDN.)
func (c *client) newRequest(ctx context.Context, rawURL string, hubAuth bool) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("build request for %s: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", userAgent)
	if hubAuth && c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, nil
}

// isHub reports whether u is on the Hub endpoint's host.
func (c *client) isHub(u *url.URL) bool {
	ep, err := url.Parse(c.endpoint)
	return err == nil && strings.EqualFold(ep.Host, u.Host)
}

// NetworkError is returned when the server could not be reached at all.
type NetworkError struct {
	Host string
	Err  error
}

func (e *NetworkError) Error() string {
	return fmt.Sprintf("cannot reach %s: %v (check your network connection, or pass the path of a local .gguf file instead)", e.Host, e.Err)
}

func (e *NetworkError) Unwrap() error { return e.Err }

// transportErr turns a failed request into an error naming the host.
func (c *client) transportErr(ctx context.Context, u *url.URL, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("request to %s: %w", u.Host, ctx.Err())
	}
	// Unwrap url.Error: its text repeats the whole URL, which the
	// NetworkError message already identifies by host.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	host := u.Host
	if ue != nil {
		if uu, perr := url.Parse(ue.URL); perr == nil && uu.Host != "" {
			host = uu.Host // the host that failed, possibly a redirect target
		}
	}
	return &NetworkError{Host: host, Err: err}
}

// StatusError is an HTTP error response.
type StatusError struct {
	Code int
	URL  string
	Msg  string
}

func (e *StatusError) Error() string { return e.Msg }

// statusErr explains a non-success response. file is the repo file being
// fetched ("" for the listing).
func (c *client) statusErr(resp *http.Response, r Ref, file string) error {
	code := resp.StatusCode
	what := resp.Request.URL.String()
	if r.Kind == HF {
		what = "hf:" + r.RepoID()
		if file != "" {
			what = fmt.Sprintf("file %q of %s", file, r.RepoID())
		}
	}
	hfCode := resp.Header.Get("X-Error-Code")
	var msg string
	switch {
	case hfCode == "RepoNotFound" || (r.Kind == HF && file == "" && code == http.StatusNotFound):
		// The Hub answers 401 for missing repos to anonymous users, so as
		// not to reveal private ones: say both.
		msg = fmt.Sprintf("repository %s not found on %s (check the spelling; private repos need HF_TOKEN)", r.RepoID(), hostOf(c.endpoint))
	case hfCode == "GatedRepo" || (r.Kind == HF && code == http.StatusForbidden):
		msg = fmt.Sprintf("%s is gated: accept its terms at %s/%s and set HF_TOKEN to a token of that account", r.RepoID(), c.endpoint, r.RepoID())
	case hfCode == "EntryNotFound" || code == http.StatusNotFound:
		msg = fmt.Sprintf("%s not found (HTTP 404 from %s)", what, resp.Request.URL.Host)
	case code == http.StatusUnauthorized:
		msg = fmt.Sprintf("%s: unauthorized (HTTP 401); set HF_TOKEN to a valid token", what)
	default:
		msg = fmt.Sprintf("%s: HTTP %s from %s", what, resp.Status, resp.Request.URL.Host)
	}
	return &StatusError{Code: code, URL: resp.Request.URL.String(), Msg: msg}
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}
