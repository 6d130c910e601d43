//go:build e2e && stack

package e2e

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// liveSMTP is a mail server on loopback that takes every message and
// keeps it: what Alertmanager's email notifier talks to in the live-stack
// test, in place of a real relay. It speaks the part of SMTP (RFC 5321)
// a client without TLS or AUTH uses, and offers neither, so
// SMTP_REQUIRE_TLS=false is what lets Alertmanager deliver to it.
type liveSMTP struct {
	addr string
	port int
	inbox[liveMail]
}

// liveMail is one message as received: its envelope and its raw data.
type liveMail struct {
	From string
	To   []string
	Data string
}

// Header returns a header field of the message (unfolded), "" when absent.
func (m liveMail) Header(name string) string {
	head, _, _ := strings.Cut(strings.ReplaceAll(m.Data, "\r\n", "\n"), "\n\n")
	head = strings.ReplaceAll(head, "\n ", " ")
	for _, line := range strings.Split(head, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func newLiveSMTP(t *testing.T) *liveSMTP {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &liveSMTP{addr: l.Addr().String()}
	_, port, _ := net.SplitHostPort(s.addr)
	s.port, _ = strconv.Atoi(port)
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); s.serve(c) }()
		}
	}()
	return s
}

func (s *liveSMTP) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReader(c)
	say := func(line string) bool { _, err := c.Write([]byte(line + "\r\n")); return err == nil }
	if !say("220 127.0.0.1 ESMTP mlx-otelcol test") {
		return
	}
	var m liveMail
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			say("250-127.0.0.1")
			say("250 8BITMIME")
		case "HELO", "NOOP":
			say("250 OK")
		case "RSET":
			m = liveMail{}
			say("250 OK")
		case "MAIL":
			_, from, _ := strings.Cut(arg, ":") // FROM:<a@b> BODY=8BITMIME
			from, _, _ = strings.Cut(strings.TrimSpace(from), " ")
			m = liveMail{From: strings.Trim(from, "<>")}
			say("250 OK")
		case "RCPT":
			_, to, _ := strings.Cut(arg, ":")
			m.To = append(m.To, strings.Trim(to, "<> "))
			say("250 OK")
		case "DATA":
			say("354 end with <CRLF>.<CRLF>")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if strings.TrimRight(l, "\r\n") == "." {
					break
				}
				data.WriteString(strings.TrimPrefix(l, ".")) // dot-stuffing
			}
			m.Data = data.String()
			s.add(m)
			m = liveMail{}
			say("250 OK queued")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("502 not implemented")
		}
	}
}

// waitFor returns the first message for which cond holds.
func (s *liveSMTP) waitFor(t *testing.T, timeout time.Duration, what string, cond func(liveMail) bool) liveMail {
	t.Helper()
	return s.wait(t, timeout, what, "the SMTP server", func(m liveMail) string {
		return strings.Join(m.To, ",") + ": " + m.Header("Subject")
	}, cond)
}
