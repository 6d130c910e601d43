package perf

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// The Go proxy is the floor a Go front door can reach: net/http's
// httputil.ReverseProxy and nothing else (no telemetry, no parsing, no
// pooled buffers; the request body read whole, as any front door that
// checks it must), relaying every write at once (FlushInterval -1, as the
// proxy does) over kept-alive connections to the engine, with the proxy's
// own transport settings. It runs as a process of its own, mlxperf started
// again with -serve-goproxy, so that its CPU and memory are its own, as
// nginx's and the collector's are.

// GoProxyFlag is the flag that makes mlxperf the Go proxy
// (-serve-goproxy LISTEN=UPSTREAM_URL).
const GoProxyFlag = "serve-goproxy"

// ServeGoProxy relays listen to upstream until the process ends.
func ServeGoProxy(listen, upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) },
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        512,
			MaxIdleConnsPerHost: 512,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	// The request body is read whole first, as the proxy reads it (and
	// nginx buffers it): streamed to the engine, its last read raced the
	// answer's headers, which FlushInterval -1 flushes at once, and net/http
	// then cut about one stream in a hundred ("use of closed network
	// connection" on the engine's answer).
	return http.ListenAndServe(listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rp.ServeHTTP(w, r)
	}))
}

// GoProxy is a running Go proxy in front of the upstream.
type GoProxy struct {
	cmd  *exec.Cmd
	addr string
}

// StartGoProxy runs this executable as the Go proxy on a free loopback
// port in front of upstream (a base URL).
func StartGoProxy(upstream string) (*GoProxy, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-"+GoProxyFlag, addr+"="+upstream)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the Go proxy: %w", err)
	}
	track(cmd.Process.Pid, true)
	g := &GoProxy{cmd: cmd, addr: addr}
	if err := waitListening(addr, 10*time.Second); err != nil {
		g.Stop()
		return nil, fmt.Errorf("the Go proxy: %w", err)
	}
	return g, nil
}

// URL is the Go proxy's base URL.
func (g *GoProxy) URL() string { return "http://" + g.addr }

// Pid is the Go proxy's process.
func (g *GoProxy) Pid() int { return g.cmd.Process.Pid }

// Stop ends the Go proxy.
func (g *GoProxy) Stop() {
	defer untrack(g.cmd.Process.Pid)
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = g.cmd.Process.Kill()
		<-done
	}
}
