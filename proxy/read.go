package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"syscall"
)

// Reading a completion's body: its media type, its size, its pace.

// readCompletion checks the Content-Type and reads the body (413, 408,
// 400, 415 otherwise).
func (p *Proxy) readCompletion(w http.ResponseWriter, r *http.Request, rec *Record) ([]byte, bool) {
	if !isJSONContent(r.Header.Get("Content-Type")) {
		// A page's form or text/plain POST needs no CORS preflight; this
		// makes every browser call to a completion route ask first.
		p.refuse(w, r, rec, unsupportedMediaType("the request body must be sent with Content-Type: application/json"))
		return nil, false
	}
	body, err := p.readBody(w, r)
	if err == nil {
		return body, true
	}
	// Every failed read is the connection's last answer (the refusals
	// below are closing): the rest of the body is never read.
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	slow := errors.As(err, &netErr) && netErr.Timeout()
	// A body cut short is a client that went away; any other read error
	// is a body that cannot be framed (a malformed chunk), answered
	// with 400 rather than nothing, which net/http would send as an
	// empty 200.
	gone := errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
	malformed := !slow && !gone && !errors.As(err, &tooLarge)
	var ref refusal
	switch {
	case errors.As(err, &tooLarge):
		ref = bodyTooLarge(fmt.Sprintf("request body is larger than %d bytes", p.cfg.MaxRequestBodyBytes))
	case slow:
		ref = bodyTimeout(fmt.Sprintf("the request body did not arrive within %s", p.cfg.BodyReadTimeout))
	case malformed:
		ref = malformedBody("the request body could not be read: " + err.Error())
	default:
		// Most often nobody reads this; a client that only half-closed
		// its side gets an answer instead of an empty 200.
		ref = incompleteBody("the request body ended before its declared length")
	}
	p.refuse(w, r, rec, ref)
	return nil, false
}

// isJSONContent: the media type is application/json (parameters such as
// charset allowed).
func isJSONContent(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// initialBodyBuffer is what a body buffer starts at whatever the client
// declares: memory follows the bytes that arrived, so slow clients
// declaring large bodies pin nothing they have not sent.
const initialBodyBuffer = 64 << 10

// readBody reads the whole request body, at most MaxRequestBodyBytes.
func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := p.cfg.MaxRequestBodyBytes
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	if r.ContentLength == 0 {
		return nil, nil
	}
	// Within timeouts.body_read of the arrival (ServeHTTP, bodyDeadline);
	// the deadline is lifted once the body is read, as the answer may
	// take minutes and net/http then watches the connection for the
	// client going away.
	defer clearDeadline(w)
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, initialBodyBuffer)))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	return buf.Bytes(), err
}
