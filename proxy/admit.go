package proxy

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// The first steps a request meets: who calls (caller.go decides), and
// whether there is room for it.

// admitCaller answers a preflight, and refuses a caller the access
// settings do not let in (caller.go).
func (p *Proxy) admitCaller(w http.ResponseWriter, r *http.Request, rec *Record) (caller, bool) {
	if ref := p.callers.checkOrigin(r); ref != nil {
		p.refuse(w, r, rec, *ref)
		return caller{}, false
	}
	if r.Method == http.MethodOptions {
		p.callers.preflight(w, r)
		return caller{}, false
	}
	who, ref := p.callers.admit(r)
	if ref != nil {
		p.refuse(w, r, rec, *ref)
		return caller{}, false
	}
	return who, true
}

// admitRequest takes a request slot, from before the body is read, so
// clients still sending bodies count too and a full proxy spends nothing
// on a refused one: at most MaxConcurrentRequests in all, and at most
// MaxConcurrentRequestsPerClient of one client (slotClient). Past either:
// 429. release gives the slot back.
func (p *Proxy) admitRequest(w http.ResponseWriter, r *http.Request, rec *Record, who caller) (release func(), ok bool) {
	n := p.admitted.Add(1)
	limit := p.cfg.MaxConcurrentRequests
	var msg string
	client := slotClient(r, who)
	switch {
	case limit > 0 && n > int64(limit):
		msg = fmt.Sprintf("the server has %d requests in progress, its limit; retry shortly", limit)
	case !p.slots.take(client):
		msg = fmt.Sprintf("this client has %d requests in progress, the limit of one client; retry shortly", p.slots.max)
	default:
		return func() { p.slots.give(client); p.admitted.Add(-1) }, true
	}
	p.admitted.Add(-1)
	if rec != nil {
		rec.Client = who.client
	}
	p.refuse(w, r, rec, tooManyRequests(msg))
	return nil, false
}

// slotClient is whom a request's slot counts under: its key, wherever it
// calls from (a key is one client however many addresses share it); a
// caller without a key, its address as connections count it (clientOf:
// an IPv4 address, an IPv6 /64, every loopback address as one). Neither
// is a label value.
func slotClient(r *http.Request, who caller) string {
	if who.client != ClientLocal && who.client != ClientAnonymous {
		return "key " + who.client
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr " + clientOfIP(net.ParseIP(host))
}

// requestSlots counts the requests in progress per client, against max
// (0: no bound). Its map holds only clients with a request in progress.
type requestSlots struct {
	max int
	mu  sync.Mutex
	by  map[string]int
}

func newRequestSlots(max int) *requestSlots {
	return &requestSlots{max: max, by: map[string]int{}}
}

func (s *requestSlots) take(client string) bool {
	if s.max <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by[client] >= s.max {
		return false
	}
	s.by[client]++
	return true
}

func (s *requestSlots) give(client string) {
	if s.max <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by[client]--; s.by[client] <= 0 {
		delete(s.by, client)
	}
}

// refusedBodyGrace is how long a connection whose answer is written may
// still read the body of its request (after it, the connection closes).
// Go's server waits as long before closing a connection with unread
// bytes (rstAvoidanceDelay), so the client reads the answer before a
// reset.
const refusedBodyGrace = 500 * time.Millisecond

// lastAnswer makes the answer about to be written the connection's last,
// sent at once: with Connection: close, net/http writes it without first
// reading up to 256 KiB of the unread body (which a stalled client would
// never send), and the read deadline ends what it reads of the body
// afterwards within refusedBodyGrace. Every refusal that comes before the
// body is read whole, and every answer of a route that takes no body,
// goes out so.
func lastAnswer(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	dropBodyLater(w, r)
}

// dropBodyLater bounds, from now, the reading of a body the handler will
// not read (see lastAnswer).
func dropBodyLater(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedBodyGrace))
	}
}

// bodyDeadline bounds the reading of a request's body, on every route,
// to timeouts.body_read from its arrival (its headers are bounded by
// timeouts.read_header, in the server). A request without a body is left
// alone: net/http is already reading its connection for the next request.
// clearDeadline lifts it once the body has been read whole.
func (p *Proxy) bodyDeadline(w http.ResponseWriter, r *http.Request, start time.Time) {
	if d := p.cfg.BodyReadTimeout; d > 0 && r.ContentLength != 0 {
		_ = http.NewResponseController(w).SetReadDeadline(start.Add(d))
	}
}

func clearDeadline(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
}
