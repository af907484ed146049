package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"time"

	"vkchat/models/hub"
)

// probeTimeout bounds the first run's network check: long enough for a
// slow but working connection to answer, short enough that an offline
// machine reaches the demo model within seconds.
const probeTimeout = 3 * time.Second

// hubEndpoint is the Hub the first run would download from.
func hubEndpoint() string {
	if ep := os.Getenv("HF_ENDPOINT"); ep != "" {
		return ep
	}
	return hub.DefaultEndpoint
}

// offlineEnv reports whether the user said there is no network:
// HF_HUB_OFFLINE is the Hugging Face tools' switch, VKCHAT_OFFLINE ours.
func offlineEnv() bool {
	for _, k := range []string{"VKCHAT_OFFLINE", "HF_HUB_OFFLINE"} {
		switch strings.ToLower(strings.TrimSpace(os.Getenv(k))) {
		case "", "0", "false", "no", "off":
		default:
			return true
		}
	}
	return false
}

// hubReachable reports whether endpoint answers an HTTP request within
// timeout. Any answer counts, an error status included: the question is
// whether a download could get through, not whether this URL is served.
func hubReachable(ctx context.Context, endpoint string, timeout time.Duration) bool {
	if offlineEnv() {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, endpoint, nil)
	if err != nil {
		return false
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}
