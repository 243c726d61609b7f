package web

import (
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"time"
)

// Bounds on what clients may hold (issue 10): a client that connects and
// says nothing, or keeps an idle keep-alive connection, must not pile up
// file descriptors until the person is locked out of their own run.
// Whoever has not authenticated costs a connection for HeaderTimeout at
// most.
type Limits struct {
	HeaderTimeout time.Duration // to read a request's headers; 0: 10s
	IdleTimeout   time.Duration // a keep-alive connection with no request; 0: 60s
	MaxConns      int           // connections served at once, WebSockets included; 0: 128
}

func (l Limits) withDefaults() Limits {
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = 10 * time.Second
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 60 * time.Second
	}
	if l.MaxConns <= 0 {
		l.MaxConns = 128
	}
	return l
}

// limitListener accepts at most n connections at once; beyond that, new
// ones wait in the kernel's backlog until one closes (the header and idle
// timeouts make sure one does).
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func limitConns(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// limitConn frees its slot on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
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
