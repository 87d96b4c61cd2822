package cli

import (
	"net"
	"sync"
)

// limitListener bounds the connections a server holds, in all and per
// client address: past either bound a new connection is closed as soon
// as it is accepted, so that no client can take every file descriptor
// of the process (the store and NATS need theirs).
type limitListener struct {
	net.Listener
	max, perClient int

	mu        sync.Mutex
	open      int
	byClient  map[string]int
	refused   uint64 // past max
	refusedBy uint64 // past perClient
}

func newLimitListener(ln net.Listener, max, perClient int) *limitListener {
	return &limitListener{Listener: ln, max: max, perClient: perClient, byClient: make(map[string]int)}
}

// Accept returns the next connection within the bounds, closing those
// past them.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := hostOf(c.RemoteAddr())
		if l.acquire(client) {
			return &limitConn{Conn: c, l: l, client: client}, nil
		}
		c.Close()
	}
}

func (l *limitListener) acquire(client string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.byClient[client] >= l.perClient:
		l.refusedBy++
		return false
	case l.open >= l.max:
		l.refused++
		return false
	}
	l.open++
	l.byClient[client]++
	return true
}

func (l *limitListener) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byClient[client]--; l.byClient[client] <= 0 {
		delete(l.byClient, client)
	}
}

// hostOf is the IP of an address, without its port.
func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	if h, _, err := net.SplitHostPort(a.String()); err == nil {
		return h
	}
	return a.String()
}

// limitConn gives its place back when closed (once, however often it
// is closed).
type limitConn struct {
	net.Conn
	l      *limitListener
	client string
	once   sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.client) })
	return err
}
