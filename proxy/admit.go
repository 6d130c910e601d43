package proxy

import (
	"fmt"
	"net/http"
)

// The first steps a request meets: who calls (caller.go decides), and
// whether there is room for it.

// admitCaller answers a preflight, and refuses a caller the access
// settings do not let in (caller.go).
func (p *Proxy) admitCaller(w http.ResponseWriter, r *http.Request, rec *Record) (caller, bool) {
	if d := p.callers.checkOrigin(r); d != nil {
		p.deny(w, r, rec, d)
		return caller{}, false
	}
	if r.Method == http.MethodOptions {
		p.callers.preflight(w, r)
		return caller{}, false
	}
	who, d := p.callers.admit(r)
	if d != nil {
		p.deny(w, r, rec, d)
		return caller{}, false
	}
	return who, true
}

func (p *Proxy) deny(w http.ResponseWriter, r *http.Request, rec *Record, d *denial) {
	d.write(w)
	if rec != nil {
		p.refuse(rec, d.status)
		return
	}
	p.metrics.refusedOther(d.status)
}

// admitRequest counts the request against MaxConcurrentRequests, from
// before its body is read, so clients still sending bodies count too and
// a full proxy spends nothing on a refused one. Past the cap: 429.
func (p *Proxy) admitRequest(w http.ResponseWriter, rec *Record) bool {
	n := p.admitted.Add(1)
	if limit := p.cfg.MaxConcurrentRequests; limit > 0 && n > int64(limit) {
		p.admitted.Add(-1)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", "too_many_requests",
			fmt.Sprintf("the server has %d requests in progress, its limit; retry shortly", limit))
		if rec != nil {
			p.refuse(rec, http.StatusTooManyRequests)
		} else {
			p.metrics.refusedOther(http.StatusTooManyRequests)
		}
		return false
	}
	return true
}
