// Package scripts holds the tests of the shell scripts beside it that no
// other package runs.
package scripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// obsStack runs obs-stack.sh with OBS_DIR dir and returns its output.
func obsStack(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"obs-stack.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "OBS_DIR="+dir)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// sleeper is a process of the test's own, standing in for whatever has the
// pid of a pid file now.
func sleeper(t *testing.T) *exec.Cmd {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	return cmd
}

func alive(cmd *exec.Cmd) bool {
	return cmd.Process.Signal(syscall.Signal(0)) == nil
}

// stop kills a pid from a pid file only while it is still the program
// start started: a pid the system gave another program since (after a
// reboot), or a pid file that does not say which program it was, is left
// alone; the pid file goes either way.
func TestStopKillsOnlyWhatStartStarted(t *testing.T) {
	dir := t.TempDir()
	stranger, oldFormat, ours := sleeper(t), sleeper(t), sleeper(t)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name+".pid"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("jaeger", fmt.Sprintf("%d\n%s/bin/jaeger\n", stranger.Process.Pid, dir))
	write("vmalert", fmt.Sprintf("%d\n", oldFormat.Process.Pid))
	write("victoria-logs", fmt.Sprintf("%d\nsleep\n", ours.Process.Pid))

	status := obsStack(t, dir, "status")
	if !strings.Contains(status, fmt.Sprintf("victoria-logs running (pid %d)", ours.Process.Pid)) || !strings.Contains(status, "jaeger stopped") {
		t.Errorf("status:\n%s", status)
	}
	out := obsStack(t, dir, "stop")
	if !strings.Contains(out, fmt.Sprintf("pid %d of %s/jaeger.pid is no longer jaeger; left alone", stranger.Process.Pid, dir)) {
		t.Errorf("stop says:\n%s", out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(ours) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(ours) {
		t.Error("the process start started runs on")
	}
	if !alive(stranger) || !alive(oldFormat) {
		t.Error("stop killed a process it did not start")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.pid")); len(left) != 0 {
		t.Errorf("pid files left: %v", left)
	}
}
