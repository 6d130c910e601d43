package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stub writes an executable shell script named name into dir.
func stub(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// macStart runs `obs-stack.sh start` as on a Mac (OBS_OS=Darwin), dry
// (OBS_DRY_RUN: each command printed, none run), with PATH holding only
// bin (the test's stand-ins) and the basic tools, and the stores in a
// directory of the test's. It returns the output and OBS_DIR.
func macStart(t *testing.T, bin string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	path := bin
	for _, tool := range []string{"bash", "sed", "cat", "mkdir", "mktemp", "mv", "rm", "uname", "dirname", "head", "tail", "ps", "sleep"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		link := filepath.Join(bin, tool)
		if _, err := os.Lstat(link); err != nil {
			if err := os.Symlink(p, link); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(filepath.Join(bin, "bash"), "obs-stack.sh", "start", "-e", "../config/scrape/loopback.env")
	cmd.Env = []string{"PATH=" + path, "HOME=" + dir, "OBS_OS=Darwin", "OBS_DRY_RUN=1", "OBS_DIR=" + dir,
		"STORES_BIN=/stores", "JAEGER_DATA_DIR=" + filepath.Join(dir, "jaeger")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("obs-stack.sh start: %v\n%s", err, out)
	}
	return string(out), dir
}

// On a Mac, start runs the stores from bin/ and Homebrew's Grafana with
// its homepath, and nothing of Debian's: no apt-get, no ip, no systemd.
func TestObsStackOnMacRunsBrewGrafana(t *testing.T) {
	bin := t.TempDir()
	prefix := t.TempDir()
	home := filepath.Join(prefix, "opt", "grafana", "share", "grafana")
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "conf", "defaults.ini"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stub(t, bin, "brew", `[ "$1" = --prefix ] && echo "`+prefix+`"`)
	stub(t, bin, "grafana", "exit 0")
	for _, forbidden := range []string{"apt-get", "ip", "systemd-analyze", "systemctl", "setsid"} {
		stub(t, bin, forbidden, "echo FORBIDDEN "+forbidden+" >&2; exit 1")
	}
	out, dir := macStart(t, bin)
	if strings.Contains(out, "FORBIDDEN") {
		t.Errorf("start ran a Linux-only program:\n%s", out)
	}
	for _, want := range []string{
		"run victoria-metrics: /stores/victoria-metrics -storageDataPath=" + dir + "/victoria-metrics",
		"run alertmanager: /stores/alertmanager --config.file=" + dir + "/alertmanager.yml",
		"run vmalert: /stores/vmalert -rule=",
		"run jaeger: /stores/jaeger --config",
		"run victoria-logs: /stores/victoria-logs -storageDataPath=" + dir + "/victoria-logs",
		"run grafana: " + bin + "/grafana server --homepath " + home,
		"grafana          http://127.0.0.1:3000",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("start's output lacks %q:\n%s", want, out)
		}
	}
	ds, err := os.ReadFile(filepath.Join(dir, "grafana", "provisioning", "datasources", "mlx.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"uid: mlx-victoriametrics", "url: http://127.0.0.1:8428", "uid: mlx-jaeger", "uid: mlx-alertmanager", "url: http://127.0.0.1:9093"} {
		if !strings.Contains(string(ds), want) {
			t.Errorf("provisioned datasources lack %q:\n%s", want, ds)
		}
	}
	db, err := os.ReadFile(filepath.Join(dir, "grafana", "provisioning", "dashboards", "mlx.yml"))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("..")
	if !strings.Contains(string(db), "path: "+filepath.Join(root, "dashboards")+"\n") {
		t.Errorf("provisioned dashboards do not read the repository's dashboards/:\n%s", db)
	}
}

// Without Grafana, start says in one line how to get it on a Mac, and
// starts the stores all the same.
func TestObsStackOnMacWithoutGrafanaSaysHow(t *testing.T) {
	out, _ := macStart(t, t.TempDir())
	if !strings.Contains(out, "grafana          not installed: brew install grafana") {
		t.Errorf("no line saying how to get Grafana:\n%s", out)
	}
	if strings.Contains(out, "run grafana") || !strings.Contains(out, "run victoria-metrics") {
		t.Errorf("start without Grafana:\n%s", out)
	}
}

// Grafana without its homepath (a program found, no conf/defaults.ini where
// Homebrew or Debian put it): one line saying what to set, the stores
// started all the same.
func TestObsStackOnMacGrafanaWithoutHomeSaysSo(t *testing.T) {
	bin := t.TempDir()
	stub(t, bin, "grafana", "exit 0")
	out, _ := macStart(t, bin)
	if !strings.Contains(out, "found but not its homepath (conf/defaults.ini): set GRAFANA_HOME; not started") ||
		strings.Contains(out, "run grafana") || !strings.Contains(out, "run victoria-logs") {
		t.Errorf("start with Grafana but no homepath:\n%s", out)
	}
}
