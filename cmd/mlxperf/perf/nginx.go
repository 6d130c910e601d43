package perf

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// nginxConf is Debian nginx as a plain reverse proxy with no telemetry: no
// access log, keep-alive to the upstream, and no response buffering, so
// that it relays a stream chunk by chunk as the proxy does. One worker per
// core, its default on Debian.
const nginxConf = `daemon off;
master_process on;
worker_processes auto;
pid {{DIR}}/nginx.pid;
error_log {{DIR}}/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path {{DIR}}/body;
    proxy_temp_path {{DIR}}/proxy;
    fastcgi_temp_path {{DIR}}/fastcgi;
    uwsgi_temp_path {{DIR}}/uwsgi;
    scgi_temp_path {{DIR}}/scgi;
    upstream engine {
        server {{UPSTREAM}};
        keepalive 128;
    }
    server {
        listen {{LISTEN}};
        location / {
            proxy_pass http://engine;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
        }
    }
}
`

// Nginx is a running nginx in front of the upstream.
type Nginx struct {
	cmd  *exec.Cmd
	addr string
}

// NginxPath is Debian's nginx, which scripts/install-deps.sh --bench installs.
const NginxPath = "/usr/sbin/nginx"

// StartNginx runs nginx from a config of its own in dir, listening on a free
// loopback port and proxying to upstream (host:port).
func StartNginx(bin, dir, upstream string) (*Nginx, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	conf := strings.NewReplacer("{{DIR}}", dir, "{{UPSTREAM}}", upstream, "{{LISTEN}}", addr).Replace(nginxConf)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir, "-c", path)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting nginx (install it with scripts/install-deps.sh --bench): %w", err)
	}
	track(cmd.Process.Pid, true)
	n := &Nginx{cmd: cmd, addr: addr}
	if err := waitListening(addr, 10*time.Second); err != nil {
		n.Stop()
		return nil, fmt.Errorf("nginx: %w (its log: %s)", err, filepath.Join(dir, "error.log"))
	}
	return n, nil
}

// URL is nginx's base URL.
func (n *Nginx) URL() string { return "http://" + n.addr }

// Pids are nginx's master and workers.
func (n *Nginx) Pid() int { return n.cmd.Process.Pid }

// Stop ends nginx and its workers.
func (n *Nginx) Stop() {
	defer untrack(n.cmd.Process.Pid)
	_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() { _ = n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitListening waits until something accepts connections on addr.
func waitListening(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s", addr, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
