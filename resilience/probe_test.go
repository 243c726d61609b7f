package resilience_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/flower-run/flower/resilience"
)

// probeTimeout keeps a failing probe from stalling the suite.
const probeTimeout = 2 * time.Second

func listen(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln.(*net.TCPListener)
}

func TestReachableLoopback(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	if !resilience.Reachable(context.Background(), "127.0.0.1", ln.Addr().(*net.TCPAddr).Port, probeTimeout) {
		t.Fatal("listening loopback port reported unreachable")
	}
}

func TestReachableClosedPort(t *testing.T) {
	ln := listen(t)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if resilience.Reachable(context.Background(), "127.0.0.1", port, probeTimeout) {
		t.Fatal("closed port reported reachable")
	}
}

func TestReachableBadTargets(t *testing.T) {
	tests := []struct {
		name string
		host string
		port int
	}{
		{"invalid TLD never resolves", "nonexistent.invalid", 443},
		{"empty host", "", 443},
		{"port zero", "127.0.0.1", 0},
		{"port too large", "127.0.0.1", 70000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if resilience.Reachable(context.Background(), tt.host, tt.port, 500*time.Millisecond) {
				t.Fatalf("Reachable(%q, %d) = true, want false", tt.host, tt.port)
			}
		})
	}
}

func TestReachableCancelledContext(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if resilience.Reachable(ctx, "127.0.0.1", ln.Addr().(*net.TCPAddr).Port, probeTimeout) {
		t.Fatal("probe with a cancelled context reported reachable")
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		baseURL  string
		wantHost string
		wantPort int
	}{
		{"", "api.anthropic.com", 443},
		{"  ", "api.anthropic.com", 443},
		{"https://api.anthropic.com", "api.anthropic.com", 443},
		{"https://api.openai.com/v1", "api.openai.com", 443},
		{"HTTP://proxy.internal", "proxy.internal", 80},
		{"http://127.0.0.1:8080/anthropic", "127.0.0.1", 8080},
		{"https://gateway.example.com:8443", "gateway.example.com", 8443},
		{"https://[::1]:9000/v1", "::1", 9000},
		{"http://[::1]", "::1", 80},
		{"api.example.com", "api.example.com", 443},
		{"api.example.com:7000", "api.example.com", 7000},
		{"://missing-scheme", "", 0},
		{"http://host:99999", "", 0},
		{"https://", "", 0},
	}
	for _, tt := range tests {
		host, port := resilience.Endpoint(tt.baseURL)
		if host != tt.wantHost || port != tt.wantPort {
			t.Errorf("Endpoint(%q) = %q, %d; want %q, %d", tt.baseURL, host, port, tt.wantHost, tt.wantPort)
		}
	}
}

func TestEndpointProbe(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	probe := resilience.EndpointProbe("http://"+ln.Addr().String(), probeTimeout)
	if probe == nil || !probe(context.Background()) {
		t.Fatal("probe of a listening endpoint: want a probe reporting reachable")
	}
	if got := resilience.EndpointProbe("://bad", probeTimeout); got != nil {
		t.Fatal("probe for an unparsable URL: want nil (no probing)")
	}
}
