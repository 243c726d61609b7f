package resilience

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultBaseURL is probed when no base URL is configured.
const DefaultBaseURL = "https://api.anthropic.com"

// Reachable reports whether host:port accepts a TCP connection: one DNS
// lookup and one handshake to the preferred address, then close. It sends no
// bytes — no HTTP, no TLS, no credentials — so probing costs nothing and
// leaks nothing. Any failure means unreachable. A positive timeout bounds the
// lookup and the handshake together.
func Reachable(ctx context.Context, host string, port int, timeout time.Duration) bool {
	if host == "" || port < 1 || port > 65535 {
		return false
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	// The resolver returns addresses in preference order; dialing only the
	// first keeps the probe to a single handshake.
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addrs[0].String(), strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// Endpoint returns the host and port a base URL points at: the URL's own
// port, else 80 for http and 443 otherwise. An empty baseURL means
// DefaultBaseURL; a URL without a scheme is taken as https. A URL that does
// not parse gives "" and 0, which Reachable reports as unreachable.
func Endpoint(baseURL string) (host string, port int) {
	baseURL = strings.TrimSpace(baseURL)
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	if !strings.Contains(baseURL, "://") {
		baseURL = "https://" + baseURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return "", 0
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0
		}
		return u.Hostname(), n
	}
	if u.Scheme == "http" { // url.Parse lowercases the scheme
		return u.Hostname(), 80
	}
	return u.Hostname(), 443
}

// EndpointProbe returns a Retrier.Probe for baseURL with the given timeout
// (normally Policy.ProbeTimeout), or nil — always reachable — when the URL
// names no host, so a broken URL fails on the call instead of parking.
func EndpointProbe(baseURL string, timeout time.Duration) func(context.Context) bool {
	host, port := Endpoint(baseURL)
	if host == "" {
		return nil
	}
	return func(ctx context.Context) bool {
		return Reachable(ctx, host, port, timeout)
	}
}
