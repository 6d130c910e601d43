package perf

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/syncbuf"
)

// Collector is the built distribution, running.
type Collector struct {
	cmd    *exec.Cmd
	out    *syncbuf.Buffer
	exited chan struct{}
}

// HealthURL is the health_check extension of the shipped config.
const HealthURL = "http://127.0.0.1:13133/"

// StartCollector runs bin with the config files (relative to dir, where it
// runs) and env added to this process's environment, and waits until its
// health check answers.
func StartCollector(bin, dir string, configs, env []string) (*Collector, error) {
	var args []string
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	c := &Collector{cmd: exec.Command(bin, args...), out: &syncbuf.Buffer{}, exited: make(chan struct{})}
	c.cmd.Dir = dir
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	track(c.cmd.Process.Pid, false)
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-c.exited:
			return nil, fmt.Errorf("the collector exited at start:\n%s", c.Output())
		default:
		}
		if resp, err := http.Get(HealthURL); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c, nil
			}
		}
		if time.Now().After(deadline) {
			c.Stop()
			return nil, fmt.Errorf("the collector was not healthy within a minute:\n%s", c.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Pid is the collector's process id.
func (c *Collector) Pid() int { return c.cmd.Process.Pid }

// Output is what the collector has logged, its last 4 KiB.
func (c *Collector) Output() string { return lastKiB(c.out.Bytes(), 4) }

// lastKiB is the last n KiB of b, as text.
func lastKiB(b []byte, n int) string {
	if len(b) > n<<10 {
		b = b[len(b)-n<<10:]
	}
	return string(b)
}

// Stop sends SIGTERM and waits, then kills after 30 s.
func (c *Collector) Stop() {
	defer untrack(c.cmd.Process.Pid)
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}
