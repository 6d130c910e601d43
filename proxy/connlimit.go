package proxy

import (
	"net"
	"sync"
)

// connLimiter bounds the client connections open at once, all together
// and per client IP address. A connection past a bound is closed as soon
// as it is accepted, rather than left waiting in the listen backlog as
// x/net's netutil.LimitListener does: a client holding connections open
// then cannot keep others (or a scrape of /metrics on this port) waiting,
// and each refusal is counted. Every connection costs a descriptor, and
// the collector shares its descriptors with its receivers and exporters.
type connLimiter struct {
	net.Listener
	max, perClient int
	refused        func(reason string)

	mu    sync.Mutex
	total int
	by    map[string]int
}

// Reasons a connection was refused (mlx_proxy_connections_refused_total).
const (
	connRefusedTotal     = "max_connections"
	connRefusedPerClient = "max_connections_per_client"
)

func limitConnections(ln net.Listener, max, perClient int, refused func(reason string)) net.Listener {
	if max <= 0 && perClient <= 0 {
		return ln
	}
	return &connLimiter{Listener: ln, max: max, perClient: perClient, refused: refused, by: map[string]int{}}
}

func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := remoteIP(c.RemoteAddr())
		if reason := l.take(ip); reason != "" {
			_ = c.Close()
			l.refused(reason)
			continue
		}
		return &limitedConn{Conn: c, release: func() { l.give(ip) }}, nil
	}
}

func (l *connLimiter) take(ip string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.max > 0 && l.total >= l.max:
		return connRefusedTotal
	case l.perClient > 0 && l.by[ip] >= l.perClient:
		return connRefusedPerClient
	}
	l.total++
	l.by[ip]++
	return ""
}

func (l *connLimiter) give(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.by[ip]--; l.by[ip] <= 0 {
		delete(l.by, ip)
	}
}

func remoteIP(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// limitedConn gives its slot back once, when closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
