package mlxsim

import (
	"bufio"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pyConn writes a response the way http.server.BaseHTTPRequestHandler does
// for mlx_lm's APIHandler, whose protocol_version is the default HTTP/1.0:
//
//   - status line "HTTP/1.0 200 OK", then "Server: BaseHTTP/0.6 Python/3.12.x"
//     and "Date", then the handler's headers exactly as spelled
//     ("Content-type", "Access-Control-Allow-*");
//   - no Content-Length except on non-streamed completions, no chunking:
//     the body ends when the connection closes, after every response;
//   - send_response() logs the access line at once, but headers are only
//     written at end_headers(): for a non-streamed completion the client sees
//     nothing until the whole body is ready;
//   - writes go straight to the socket (wfile is unbuffered), and a write to
//     a client that went away raises BrokenPipeError.
//
// To control the bytes on the wire the connection is hijacked from net/http.
// When the ResponseWriter cannot be hijacked (HTTP/2, httptest recorders)
// the same calls go through the ResponseWriter instead (Go then picks the
// protocol, canonical header case and framing).
type pyConn struct {
	e           *Engine
	w           http.ResponseWriter
	r           *http.Request
	conn        net.Conn
	br          *bufio.Reader
	addr        string
	port        int
	requestline string
	origin      string

	status  int
	reason  string
	hdr     []string
	started bool
	sent    bool
	err     error // first write error
	dropped bool
}

func newPyConn(e *Engine, w http.ResponseWriter, r *http.Request) *pyConn {
	c := &pyConn{e: e, w: w, r: r, origin: r.Header.Get("Origin")}
	host, port, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	c.addr = host
	c.port, _ = strconv.Atoi(port)
	c.requestline = r.Method + " " + r.RequestURI + " " + r.Proto
	if hj, ok := w.(http.Hijacker); ok {
		if conn, brw, err := hj.Hijack(); err == nil {
			_ = conn.SetDeadline(time.Time{})
			c.conn, c.br = conn, brw.Reader
		}
	}
	return c
}

// readBody is rfile.read(content_length). On a hijacked connection it reads
// the socket directly, so net/http never answers "Expect: 100-continue"
// (an HTTP/1.0 handler does not either).
func (c *pyConn) readBody(n int64) []byte {
	var src io.Reader = c.r.Body
	if c.br != nil {
		src = c.br
	}
	b, _ := io.ReadAll(io.LimitReader(src, n))
	return b
}

// sendResponse is send_response(code[, message]).
func (c *pyConn) sendResponse(code int, message string) {
	c.e.log.access(c.addr, c.requestline, code)
	c.sendResponseOnly(code, message)
}

func (c *pyConn) sendResponseOnly(code int, message string) {
	if message == "" {
		message = http.StatusText(code)
	}
	c.status, c.reason, c.started = code, message, true
	c.hdr = c.hdr[:0]
	c.sendHeader("Server", serverHdr)
	c.sendHeader("Date", c.e.opts.Now().UTC().Format(http.TimeFormat))
}

func (c *pyConn) sendHeader(k, v string) {
	c.hdr = append(c.hdr, k+": "+v)
}

func (c *pyConn) corsHeaders() {
	allowed := c.e.opts.AllowedOrigins
	star := false
	for _, a := range allowed {
		if a == "*" {
			star = true
		}
	}
	if star {
		c.sendHeader("Access-Control-Allow-Origin", "*")
	} else {
		for _, a := range allowed {
			if a == c.origin && c.origin != "" {
				c.sendHeader("Access-Control-Allow-Origin", c.origin)
				c.sendHeader("Vary", "Origin")
				break
			}
		}
	}
	c.sendHeader("Access-Control-Allow-Methods", "*")
	c.sendHeader("Access-Control-Allow-Headers", "*")
}

// completionHeaders is _set_completion_headers(code).
func (c *pyConn) completionHeaders(code int) {
	c.sendResponse(code, "")
	c.sendHeader("Content-type", "application/json")
	c.corsHeaders()
}

// streamHeaders is _set_stream_headers(code).
func (c *pyConn) streamHeaders(code int) {
	c.sendResponse(code, "")
	c.sendHeader("Content-type", "text/event-stream")
	c.sendHeader("Cache-Control", "no-cache")
	c.corsHeaders()
}

// endHeaders is end_headers(): the status line and headers hit the wire.
func (c *pyConn) endHeaders() error {
	if c.sent {
		return nil
	}
	c.sent = true
	if c.conn == nil {
		h := c.w.Header()
		for _, line := range c.hdr {
			k, v, _ := strings.Cut(line, ": ")
			if k == "Server" || k == "Date" || k == "Content-Length" {
				h.Set(k, v)
				continue
			}
			h.Add(k, v)
		}
		c.w.WriteHeader(c.status)
		if f, ok := c.w.(http.Flusher); ok {
			f.Flush()
		}
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.0 %d %s\r\n", c.status, c.reason)
	for _, line := range c.hdr {
		b.WriteString(line + "\r\n")
	}
	b.WriteString("\r\n")
	return c.rawWrite([]byte(b.String()))
}

// write is wfile.write(data) (+ flush).
func (c *pyConn) write(p []byte) error {
	if c.conn == nil {
		if c.err != nil {
			return c.err
		}
		if _, err := c.w.Write(p); err != nil {
			c.err = err
			return err
		}
		if f, ok := c.w.(http.Flusher); ok {
			f.Flush()
		}
		return nil
	}
	return c.rawWrite(p)
}

func (c *pyConn) writeString(s string) error { return c.write([]byte(s)) }

func (c *pyConn) rawWrite(p []byte) error {
	if c.err != nil {
		return c.err
	}
	if _, err := c.conn.Write(p); err != nil {
		c.err = err
		return err
	}
	return nil
}

// sendError is send_error(code, message): an HTML error page.
func (c *pyConn) sendError(code int, message, explain string) {
	c.e.log.httpMessage(c.addr, fmt.Sprintf("code %d, message %s", code, message))
	c.sendResponse(code, message)
	c.sendHeader("Connection", "close")
	body := fmt.Sprintf(errorPage, code, html.EscapeString(message), code, explain)
	body = strings.ReplaceAll(body, "&#39;", "'")
	body = strings.ReplaceAll(body, "&#34;", "\"")
	c.sendHeader("Content-Type", "text/html;charset=utf-8")
	c.sendHeader("Content-Length", strconv.Itoa(len(body)))
	if c.endHeaders() == nil && !strings.HasPrefix(c.requestline, "HEAD ") {
		_ = c.writeString(body)
	}
}

const errorPage = `<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: %d</p>
        <p>Message: %s.</p>
        <p>Error code explanation: %d - %s.</p>
    </body>
</html>
`

// drop ends the request without a response, like a handler that raised.
func (c *pyConn) drop() {
	c.dropped = true
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

// finish is shutdown_request(): the connection always closes (HTTP/1.0).
func (c *pyConn) finish() {
	if c.conn != nil {
		_ = c.conn.Close()
		return
	}
	if c.dropped && !c.sent {
		panic(http.ErrAbortHandler)
	}
}

// writeException maps a socket write error to the Python exception the
// handler would see.
func writeException(err error) (typ, msg string) {
	if errors.Is(err, syscall.ECONNRESET) {
		return "ConnectionResetError", "[Errno 54] Connection reset by peer"
	}
	return "BrokenPipeError", "[Errno 32] Broken pipe"
}
