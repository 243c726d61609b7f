package web

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Bounds on what clients may hold (issues 10 and 20): a client that
// connects and says nothing, or keeps an idle keep-alive connection, must
// not pile up file descriptors until the person is locked out of their own
// run. A connection is unauthenticated until a request on it carries the
// token; unauthenticated ones have a small pool of their own
// (UnauthConns: when it is full, the oldest is closed to make room, so a
// flood of them never keeps the person's next connection waiting) and
// live HeaderTimeout at most between requests. Authenticated ones hold one
// of MaxConns slots and stay IdleTimeout between requests. Both flower
// serve and flower serve --runs serve through this.
type Limits struct {
	HeaderTimeout time.Duration // to read a request's headers, and an unauthenticated connection's idle time; 0: 5s
	IdleTimeout   time.Duration // an authenticated keep-alive connection with no request; 0: 60s
	MaxConns      int           // authenticated connections at once, WebSockets included; 0: 128
	UnauthConns   int           // unauthenticated connections at once; 0: 32
}

func (l Limits) withDefaults() Limits {
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = 5 * time.Second
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 60 * time.Second
	}
	if l.MaxConns <= 0 {
		l.MaxConns = 128
	}
	if l.UnauthConns <= 0 {
		l.UnauthConns = 32
	}
	return l
}

// guard keeps the two pools of a listener's connections.
type guard struct {
	lim    Limits
	mu     sync.Mutex   // guards the fields below and every guardConn's state
	unauth []*guardConn // oldest first
	authed int
}

// guardListener admits every connection at once into the unauthenticated
// pool, closing its oldest member when the pool is full: file descriptors
// stay bounded (UnauthConns + MaxConns) and accepting never waits.
type guardListener struct {
	net.Listener
	g *guard
}

func guardConns(l net.Listener, lim Limits) (*guardListener, *guard) {
	g := &guard{lim: lim}
	return &guardListener{Listener: l, g: g}, g
}

func (l *guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	gc := &guardConn{Conn: c, g: l.g}
	var evict *guardConn
	l.g.mu.Lock()
	l.g.unauth = append(l.g.unauth, gc)
	if len(l.g.unauth) > l.g.lim.UnauthConns {
		evict = l.g.unauth[0]
	}
	l.g.mu.Unlock()
	if evict != nil {
		evict.Close()
	}
	return gc, nil
}

// promote moves c to the authenticated pool once a request on it carried
// the token, if a slot is free; else it stays unauthenticated (and may be
// closed to make room), which only costs its client a reconnection.
func (g *guard) promote(c *guardConn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.authed || c.closed || g.authed >= g.lim.MaxConns {
		return
	}
	g.drop(c)
	c.authed = true
	g.authed++
	c.stopIdle()
}

// drop removes c from the unauthenticated pool; g.mu is held.
func (g *guard) drop(c *guardConn) {
	for i, u := range g.unauth {
		if u == c {
			g.unauth = append(g.unauth[:i], g.unauth[i+1:]...)
			return
		}
	}
}

// state is the http.Server's ConnState: an unauthenticated connection
// that goes idle is closed after HeaderTimeout unless a request comes.
func (g *guard) state(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*guardConn)
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c.stopIdle()
	if st == http.StateIdle && !c.authed && !c.closed {
		c.idle = time.AfterFunc(g.lim.HeaderTimeout, func() { c.Close() })
	}
}

// guardConn leaves its pool on the first Close.
type guardConn struct {
	net.Conn
	g *guard
	// Guarded by g.mu:
	authed, closed bool
	idle           *time.Timer
}

func (c *guardConn) stopIdle() {
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
}

func (c *guardConn) Close() error {
	err := c.Conn.Close()
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if c.closed {
		return err
	}
	c.closed = true
	c.stopIdle()
	if c.authed {
		g.authed--
	} else {
		g.drop(c)
	}
	return err
}

// connKey holds a request's *guardConn in its context.
type connKey struct{}

// promoteRequest marks the connection of r, whose token was right, as
// authenticated.
func promoteRequest(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*guardConn); ok {
		c.g.promote(c)
	}
}

// errorLog is the http.Server's log: an accept error (out of file
// descriptors, say) is printed once, then only counted, so a flood cannot
// flood the terminal; the count is printed when the server ends. Other
// lines pass through.
type errorLog struct {
	mu      sync.Mutex // guards w and accepts
	w       io.Writer
	accepts int
}

func (e *errorLog) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if strings.Contains(string(p), "Accept error") {
		e.accepts++
		if e.accepts > 1 {
			return len(p), nil
		}
		fmt.Fprintf(e.w, "flower serve: %s (further accept errors are counted, not shown)\n", strings.TrimSpace(strings.TrimPrefix(string(p), "http: ")))
		return len(p), nil
	}
	return e.w.Write(p)
}

// summary prints how many accept errors were not shown.
func (e *errorLog) summary() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.accepts > 1 {
		fmt.Fprintf(e.w, "flower serve: %d accept errors in all\n", e.accepts)
	}
}

func newErrorLog(w io.Writer) (*errorLog, *log.Logger) {
	e := &errorLog{w: w}
	return e, log.New(e, "", 0)
}
