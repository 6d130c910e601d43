package proxy

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// connLimiter bounds the client connections open at once, all together
// and per client (clientOf: an IPv4 address, an IPv6 /64, or the loopback
// interface as one). A connection past a bound is closed as soon as it is
// accepted, rather than left waiting in the listen backlog as x/net's
// netutil.LimitListener does, and each refusal is counted. Every
// connection costs a descriptor, and the collector shares its descriptors
// with its receivers and exporters.
//
// No client locks out the rest with connections it does not use:
//   - At a bound, the oldest idle keep-alive connection (of the client at
//     its bound, or at the total bound of the client holding the most) is
//     closed for the new one: an idle connection holds nothing a client
//     cannot open again, and HTTP clients retry on a closed idle one.
//   - Remote clients together hold at most max - perClient: the loopback
//     interface keeps room for its own bound, so VictoriaMetrics on this
//     machine scrapes /metrics on the proxy's port however many remote
//     connections are open. Loopback addresses count as one client
//     (127.0.0.2 is this machine as much as 127.0.0.1).
//
// Connections that are not idle are bounded in time by the server:
// timeouts.read_header for headers, timeouts.body_read for a body, and
// the request slots (admit.go) for what they ask.
type connLimiter struct {
	net.Listener
	max, perClient int
	refused        func(reason string)

	mu     sync.Mutex
	total  int
	remote int
	by     map[string]int
	open   map[*limitedConn]struct{}
}

// Reasons a connection was refused (mlx_proxy_connections_refused_total).
const (
	connRefusedTotal     = "max_connections"
	connRefusedPerClient = "max_connections_per_client"
)

// loopbackClient is the client of every loopback address.
const loopbackClient = "loopback"

func limitConnections(ln net.Listener, max, perClient int, refused func(reason string)) *connLimiter {
	return &connLimiter{Listener: ln, max: max, perClient: perClient, refused: refused,
		by: map[string]int{}, open: map[*limitedConn]struct{}{}}
}

// Accept returns the next connection within the bounds.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.max <= 0 && l.perClient <= 0 {
			return c, nil
		}
		client := clientOf(c.RemoteAddr())
		lc := &limitedConn{Conn: c, client: client, loopback: client == loopbackClient, l: l}
		reason, evict := l.take(lc)
		if evict != nil {
			_ = evict.Close()
		}
		if reason != "" {
			// Counted first: the client may look as soon as it is closed.
			l.refused(reason)
			_ = c.Close()
			continue
		}
		return lc, nil
	}
}

// take gives c a slot, or says which bound it met; evict is an idle
// connection to close to make room (its slot is given to c at once).
func (l *connLimiter) take(c *limitedConn) (reason string, evict *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var over string
	switch {
	case l.perClient > 0 && l.by[c.client] >= l.perClient:
		over = connRefusedPerClient
	case l.max > 0 && l.total >= l.max:
		over = connRefusedTotal
	case l.max > 0 && !c.loopback && l.remote >= l.remoteMax():
		over = connRefusedTotal
	}
	if over != "" {
		if evict = l.idleVictim(c, over); evict == nil {
			return over, nil
		}
		l.release(evict)
	}
	l.total++
	l.by[c.client]++
	if !c.loopback {
		l.remote++
	}
	l.open[c] = struct{}{}
	return "", evict
}

// remoteMax is what remote clients may hold together: the loopback
// interface keeps room for one client's bound.
func (l *connLimiter) remoteMax() int {
	if l.perClient > 0 && l.perClient < l.max {
		return l.max - l.perClient
	}
	return l.max
}

// idleVictim is the idle connection to close for c, nil when none is: at
// the per-client bound one of c's client, else (the total bound) one of
// the client holding the most, remote ones when the remote share is full;
// the one idle longest among them.
func (l *connLimiter) idleVictim(c *limitedConn, over string) *limitedConn {
	var best *limitedConn
	for o := range l.open {
		if !o.idle || o.evicted {
			continue
		}
		switch {
		case over == connRefusedPerClient && o.client != c.client:
			continue
		case over == connRefusedTotal && !c.loopback && o.loopback:
			continue // a remote client's room is the remote share
		}
		if best == nil || l.by[o.client] > l.by[best.client] ||
			(l.by[o.client] == l.by[best.client] && o.idleSince.Before(best.idleSince)) {
			best = o
		}
	}
	return best
}

// release gives c's slot back, once (the lock held).
func (l *connLimiter) release(c *limitedConn) {
	if c.evicted {
		return
	}
	c.evicted = true
	delete(l.open, c)
	l.total--
	if !c.loopback {
		l.remote--
	}
	if l.by[c.client]--; l.by[c.client] <= 0 {
		delete(l.by, c.client)
	}
}

// connState follows the server's connections (http.Server.ConnState): an
// idle one may be closed to make room.
func (l *connLimiter) connState(nc net.Conn, st http.ConnState) {
	if t, ok := nc.(interface{ NetConn() net.Conn }); ok {
		nc = t.NetConn() // TLS wraps the limited connection
	}
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateIdle:
		c.idle, c.idleSince = true, time.Now()
	case http.StateActive, http.StateNew:
		c.idle = false
	}
}

// clientOf is the client a connection counts under: its IPv4 address, its
// IPv6 /64 (one host's or one network's block, which it may use whole),
// or loopbackClient for every loopback address.
func clientOf(a net.Addr) string {
	var ip net.IP
	if t, ok := a.(*net.TCPAddr); ok {
		ip = t.IP
	} else if host, _, err := net.SplitHostPort(a.String()); err == nil {
		ip = net.ParseIP(host)
	} else {
		return a.String()
	}
	return clientOfIP(ip)
}

func clientOfIP(ip net.IP) string {
	switch {
	case ip == nil:
		return ""
	case ip.IsLoopback():
		return loopbackClient
	case ip.To4() != nil:
		return ip.To4().String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// limitedConn gives its slot back once, when closed.
type limitedConn struct {
	net.Conn
	client   string
	loopback bool
	l        *connLimiter
	// Under l.mu: idle (and since when), and whether the slot was given
	// back (closed, or evicted for another).
	idle      bool
	idleSince time.Time
	evicted   bool
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.release(c)
	c.l.mu.Unlock()
	return err
}
