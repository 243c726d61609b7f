package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// ErrNotLoopback is returned by Listen for an address other machines can
// reach, unless remote access was allowed.
var ErrNotLoopback = errors.New("not a loopback address")

// Listen listens on addr (HOST:PORT; port 0 picks a free one). Unless
// allowRemote, HOST must be a loopback address or "localhost": whoever
// reaches the server and holds the token steers the run, so by default only
// this machine can (SPEC §8).
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	if err := CheckAddr(addr, allowRemote); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return l, nil
}

// CheckAddr is Listen's check of addr, without listening.
func CheckAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: want HOST:PORT, e.g. 127.0.0.1:8080", addr)
	}
	if !allowRemote && !Loopback(host) {
		return fmt.Errorf("address %s: %w; other machines could reach it (pass --allow-remote to serve it anyway)", addr, ErrNotLoopback)
	}
	return nil
}

// Loopback reports whether host names this machine only: "localhost" or a
// loopback IP (127.0.0.0/8, ::1). An empty host means every interface.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the address of the page on l, with the token: what to print at
// start so the person can open it.
func URL(l net.Listener, token string) string {
	return "http://" + l.Addr().String() + "/?token=" + url.QueryEscape(token)
}

// Serve serves on l until ctx ends, then stops accepting, ends every
// request and WebSocket (their contexts derive from ctx) and waits for
// their handlers to return. It returns early with the listener's error.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	lim := s.opts.Limits.withDefaults()
	elog, logger := newErrorLog(s.opts.Log)
	defer elog.summary()
	gl, g := guardConns(l, lim)
	hs := &http.Server{Handler: s, ReadHeaderTimeout: lim.HeaderTimeout, IdleTimeout: lim.IdleTimeout,
		ErrorLog: logger, BaseContext: func(net.Listener) context.Context { return ctx },
		ConnState:   g.state,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }}
	l = gl
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		s.conns.Wait()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Requests in flight see ctx done and return at once; the bound only
	// matters for a handler stuck in a write to a client that stopped
	// reading.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if hs.Shutdown(sctx) != nil {
		hs.Close()
	}
	<-errc
	s.conns.Wait()
	return nil
}
