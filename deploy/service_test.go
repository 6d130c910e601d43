package deploy

// scripts/service.sh install and uninstall into a temporary DESTDIR, as
// `make install DESTDIR=...` runs them, with a stand-in for the collector
// (BINARY: any executable; the ocb build is not needed). This file: the
// helpers and the systemd unit; launchd_test.go: the LaunchAgent.

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	name          = "mlx-otelcol"
	linuxStateDir = "/var/lib/" + name // StateDirectory= of the system manager (%S = /var/lib)
	linuxConfDir  = "/etc/" + name
	linuxUnit     = "/etc/systemd/system/" + name + ".service"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd) // go test runs in deploy/
}

// The variables service.sh reads, which the environment of go test (make
// test PREFIX=..., a sudo shell) must not leak into it.
var scriptVars = []string{"DESTDIR", "PREFIX", "BINDIR", "SYSCONFDIR", "UNITDIR", "CONFIGS",
	"BINARY", "MLX_OTELCOL", "MLX_SERVICE_PLATFORM", "SUDO_USER", "HOME"}

// serviceSh runs scripts/service.sh ACTION from the repository's root with
// env added to a cleaned environment.
func serviceSh(t *testing.T, action string, env ...string) string {
	t.Helper()
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "service.sh"), action)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		if !slices.Contains(scriptVars, kv[:strings.IndexByte(kv+"=", '=')]) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/service.sh %s (%s): %v\n%s", action, strings.Join(env, " "), err, out)
	}
	return string(out)
}

// fixtures: a stand-in collector and an overlay config, whose name sorts
// before mlx.yaml, so that the order of the --config flags is CONFIGS'
// and not the directory's.
func fixtures(t *testing.T) (binary, overlay string) {
	t.Helper()
	dir := t.TempDir()
	binary = filepath.Join(dir, "fake-collector")
	if err := os.WriteFile(binary, []byte("#!/bin/sh\n# stands in for _build/mlx-otelcol\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	overlay = filepath.Join(dir, "a-overlay.yaml")
	if err := os.WriteFile(overlay, []byte("# an overlay\nreceivers: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return binary, overlay
}

func sameFile(t *testing.T, got, want string) {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Error(err)
		return
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s is not a copy of %s", got, want)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// shutdownGrace is the supervisor's shutdown_grace_period in the shipped
// config: how long the collector may take to stop the engine.
func shutdownGrace(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "mlx.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+shutdown_grace_period:\s*(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("config/mlx.yaml has no shutdown_grace_period")
	}
	d, err := time.ParseDuration(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// unitFile is a unit's settings: section -> key -> values, in order (a key
// such as Environment= may be given more than once).
type unitFile map[string]map[string][]string

func parseUnit(t *testing.T, path string) unitFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unitFile{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case strings.HasSuffix(line, `\`):
			t.Fatalf("%s:%d: a continued line; the test does not parse those", path, n)
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a setting: %s", path, n, line)
			}
			u[section][strings.TrimSpace(k)] = append(u[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return u
}

// one is the value of a setting given once.
func (u unitFile) one(t *testing.T, section, key string) string {
	t.Helper()
	v := u[section][key]
	if len(v) != 1 {
		t.Errorf("[%s] %s= is set %d times, want once: %q", section, key, len(v), v)
		return ""
	}
	return v[0]
}

// env is the unit's Environment= variables.
func (u unitFile) env(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range u["Service"]["Environment"] {
		for _, kv := range strings.Fields(e) {
			k, v, ok := strings.Cut(strings.Trim(kv, `"`), "=")
			if !ok {
				t.Fatalf("Environment=%s: not VAR=value", e)
			}
			env[k] = v
		}
	}
	return env
}

// The system manager's specifiers the unit uses.
func expandSpecifiers(s string) string {
	return strings.NewReplacer("%S", "/var/lib", "%%", "%").Replace(s)
}

// The systemd unit: what make install writes on Linux, verified by
// systemd-analyze, then removed by make uninstall, which leaves the data.
func TestSystemdUnit(t *testing.T) {
	root := repoRoot(t)
	binary, overlay := fixtures(t)
	destdir := t.TempDir()
	env := []string{"DESTDIR=" + destdir, "BINARY=" + binary,
		"CONFIGS=config/mlx.yaml " + overlay, "MLX_SERVICE_PLATFORM=linux"}
	serviceSh(t, "install", env...)

	// What was installed, where a user looks for it.
	bin := "/usr/local/bin/" + name
	configs := []string{linuxConfDir + "/mlx.yaml", linuxConfDir + "/a-overlay.yaml"}
	envFile := linuxConfDir + "/" + name + ".env"
	sameFile(t, destdir+bin, binary)
	if st, err := os.Stat(destdir + bin); err == nil && st.Mode()&0o111 != 0o111 {
		t.Errorf("%s: mode %v, want executable by all", bin, st.Mode())
	}
	sameFile(t, destdir+configs[0], filepath.Join(root, "config", "mlx.yaml"))
	sameFile(t, destdir+configs[1], overlay)
	sameFile(t, destdir+envFile, filepath.Join(root, "deploy", name+".env"))
	// The ring's hostfile beside the configs, the service's default one.
	sameFile(t, destdir+linuxConfDir+"/hosts.json", filepath.Join(root, "config", "ring", "hosts.json"))

	u := parseUnit(t, destdir+linuxUnit)
	svc := func(key string) string { t.Helper(); return u.one(t, "Service", key) }
	if got := u.env(t)["MLX_RING_HOSTFILE"]; got != linuxConfDir+"/hosts.json" {
		t.Errorf("MLX_RING_HOSTFILE=%s, want the installed hostfile", got)
	}

	// ExecStart: the binary, then each config in CONFIGS' order.
	want := []string{bin, "--config", configs[0], "--config", configs[1]}
	if got := strings.Fields(svc("ExecStart")); !slices.Equal(got, want) {
		t.Errorf("ExecStart=%s\nwant       %s", strings.Join(got, " "), strings.Join(want, " "))
	}

	// Restarted after a crash, not after a clean stop; stopped within
	// longer than the collector takes to stop the engine, the collector
	// alone getting SIGTERM (it stops the engine itself).
	if got := svc("Restart"); got != "on-failure" {
		t.Errorf("Restart=%s, want on-failure", got)
	}
	if d, err := time.ParseDuration(svc("RestartSec")); err != nil || d < time.Second {
		t.Errorf("RestartSec=%s: want a pause of a second or more (%v)", svc("RestartSec"), err)
	}
	grace := shutdownGrace(t)
	if d, err := time.ParseDuration(svc("TimeoutStopSec")); err != nil || d <= grace {
		t.Errorf("TimeoutStopSec=%s: want more than the engine's shutdown_grace_period, %v (%v)", svc("TimeoutStopSec"), grace, err)
	}
	if got := svc("KillMode"); got != "mixed" {
		t.Errorf("KillMode=%s, want mixed: SIGTERM to the collector, which stops the engine", got)
	}

	// The sandbox.
	for key, want := range map[string]string{
		"NoNewPrivileges":       "yes",
		"ProtectSystem":         "strict",
		"PrivateTmp":            "yes",
		"CapabilityBoundingSet": "",
		"RestrictSUIDSGID":      "yes",
		"ProtectKernelTunables": "yes",
		"ProtectKernelModules":  "yes",
		"ProtectControlGroups":  "yes",
	} {
		if got := svc(key); got != want {
			t.Errorf("%s=%s, want %q", key, got, want)
		}
	}
	if got := svc("ProtectHome"); !slices.Contains([]string{"yes", "read-only", "tmpfs"}, got) {
		t.Errorf("ProtectHome=%s: want the homes hidden or read-only", got)
	}
	if user := svc("User"); user == "" || user == "root" || user == "0" {
		t.Errorf("User=%s: want an unprivileged user", user)
	}
	// nvidia-smi and a CUDA engine need /dev/nvidia*: no device allow-list
	// (ProtectClock=yes implies one).
	for _, key := range []string{"PrivateDevices", "DeviceAllow", "DevicePolicy", "ProtectClock"} {
		if v, ok := u["Service"][key]; ok && !slices.Equal(v, []string{"no"}) {
			t.Errorf("%s=%s would shut out the GPU", key, strings.Join(v, " "))
		}
	}

	// One data directory: StateDirectory=, MLX_DATA_DIR, the working
	// directory, and the only place the sandbox lets it write.
	if got := svc("StateDirectory"); got != name {
		t.Errorf("StateDirectory=%s, want %s", got, name)
	}
	uenv := u.env(t)
	if got := expandSpecifiers(uenv["MLX_DATA_DIR"]); got != linuxStateDir {
		t.Errorf("MLX_DATA_DIR=%s (%s), want the state directory %s", uenv["MLX_DATA_DIR"], got, linuxStateDir)
	}
	if got := expandSpecifiers(svc("WorkingDirectory")); got != linuxStateDir {
		t.Errorf("WorkingDirectory=%s, want %s", got, linuxStateDir)
	}
	if got := expandSpecifiers(uenv["HF_HOME"]); !strings.HasPrefix(got, linuxStateDir+"/") {
		t.Errorf("HF_HOME=%s: want the model cache inside %s, where the engine can write it", got, linuxStateDir)
	}
	for _, p := range u["Service"]["ReadWritePaths"] {
		for _, f := range strings.Fields(p) {
			if f = expandSpecifiers(strings.TrimLeft(f, "-+")); f != linuxStateDir && !strings.HasPrefix(f, linuxStateDir+"/") {
				t.Errorf("ReadWritePaths= %s: outside the state directory", f)
			}
		}
	}
	// The env file: optional, and the shipped one leaves MLX_DATA_DIR alone.
	if got := svc("EnvironmentFile"); got != "-"+envFile {
		t.Errorf("EnvironmentFile=%s, want -%s", got, envFile)
	}
	if b, err := os.ReadFile(destdir + envFile); err == nil && regexp.MustCompile(`(?m)^\s*(export\s+)?MLX_DATA_DIR=`).Match(b) {
		t.Errorf("%s sets MLX_DATA_DIR, which would move the data out of the state directory", envFile)
	}
	if got := u.one(t, "Install", "WantedBy"); got != "multi-user.target" {
		t.Errorf("WantedBy=%s, want multi-user.target", got)
	}

	// systemd's own check of the unit as installed: DESTDIR as the root,
	// which holds the ExecStart binary, with this machine's targets and
	// slices beside it for the default dependencies.
	if runtime.GOOS == "linux" {
		verifyUnit(t, destdir)
	} else {
		t.Logf("systemd-analyze verify: Linux only (GOOS=%s)", runtime.GOOS)
	}

	// A second install keeps the site's env file.
	writeFile(t, destdir+envFile, "MLX_MODEL=mlx-community/Other-4bit\n")
	serviceSh(t, "install", env...)
	if b, _ := os.ReadFile(destdir + envFile); string(b) != "MLX_MODEL=mlx-community/Other-4bit\n" {
		t.Errorf("make install replaced the existing %s", envFile)
	}

	// Uninstall removes what install put and nothing else: the data stays.
	data := []string{linuxStateDir + "/server.log", linuxStateDir + "/logs/engine.jsonl"}
	for _, p := range data {
		writeFile(t, destdir+p, "data\n")
	}
	serviceSh(t, "uninstall", env...)
	for _, p := range []string{bin, linuxUnit, linuxConfDir} {
		if exists(destdir + p) {
			t.Errorf("make uninstall left %s", p)
		}
	}
	for _, p := range data {
		if !exists(destdir + p) {
			t.Errorf("make uninstall removed the data: %s", p)
		}
	}
	left := filesUnder(t, destdir)
	left = slices.DeleteFunc(left, func(p string) bool {
		return strings.HasPrefix(p, linuxStateDir+"/") || strings.HasPrefix(p, "/usr/lib/systemd/system/")
	})
	if len(left) > 0 {
		t.Errorf("make uninstall left %v", left)
	}
}

// filesUnder lists the files (not directories) under dir, as paths from it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// systemdAnalyze finds systemd-analyze, which make test installs (Debian's
// systemd package, scripts/install-deps.sh): missing, the test fails.
func systemdAnalyze(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SYSTEMD_ANALYZE"); p != "" {
		return p
	}
	if p, err := exec.LookPath("systemd-analyze"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/systemd-analyze", "/bin/systemd-analyze"} {
		if exists(p) {
			return p
		}
	}
	t.Fatal("no systemd-analyze: scripts/install-deps.sh installs Debian's systemd package (make test runs it first)")
	return ""
}

func verifyUnit(t *testing.T, destdir string) {
	t.Helper()
	analyze := systemdAnalyze(t)
	units := "/usr/lib/systemd/system"
	if !exists(units + "/sysinit.target") {
		units = "/lib/systemd/system"
	}
	seeded := 0
	for _, pat := range []string{"*.target", "*.slice"} {
		matches, _ := filepath.Glob(filepath.Join(units, pat))
		for _, m := range matches {
			dst := destdir + "/usr/lib/systemd/system/" + filepath.Base(m)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if target, err := os.Readlink(m); err == nil {
				err = os.Symlink(target, dst) // relative, within the same directory
				if err != nil {
					t.Fatal(err)
				}
			} else if b, err := os.ReadFile(m); err == nil {
				writeFile(t, dst, string(b))
			}
			seeded++
		}
	}
	if seeded == 0 {
		t.Fatalf("no systemd targets in %s to verify the unit against", units)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, analyze, "verify", "--root="+destdir, linuxUnit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", linuxUnit, err, out)
	}
	// The exposure score, for the log (its weights change between systemd
	// versions, so it is not asserted).
	out, err = exec.CommandContext(ctx, analyze, "security", "--offline=yes", "--no-pager", "--root="+destdir, linuxUnit).CombinedOutput()
	if i := bytes.Index(out, []byte("Overall exposure")); err == nil && i >= 0 {
		t.Logf("systemd-analyze security: %s", bytes.TrimSpace(out[i:]))
	}
}
