//go:build e2e && stack

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promqlnames"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/promtext"
)

// TestStack is the live-stack proof: the built collector in demo mode,
// VictoriaMetrics scraping it with the shipped scrape config (rendered for
// loopback), vmalert with the shipped rules, Alertmanager with the shipped
// config, a webhook receiver and a mail server of the test's own. With
// traffic through the proxy it checks that
//   - every scrape target is up, and no series name is served by two jobs;
//   - every dashboard query returns data, or is listed (with a reason) in
//     dashboards/expected-empty.yml;
//   - one alert fires end to end: the engine is killed and cannot start again
//     (its program is gone), and MLXServerDown reaches the on-call webhook
//     and the on-call address by email (SMTP, receivers.env's channels);
//   - every metric name any rule or dashboard reads exists in
//     VictoriaMetrics, or is in promqlnames.MayBeAbsent (with a reason).
//
// One stack serves every check, so it starts once. The test render scrapes
// every 2 s, VictoriaMetrics answers with 1 s of latency, vmalert writes
// back every second and Alertmanager waits 1 s for a new group; the rules
// keep their own intervals and `for` durations, which set the pace: 70 to 80 s
// from the fault to the page, about two minutes for the whole test.
func TestStack(t *testing.T) {
	began := time.Now()
	t.Cleanup(func() { t.Logf("TestStack took %s", time.Since(began).Round(time.Second)) })

	hook := newLiveWebhook(t)
	mail := newLiveSMTP(t)

	// The engine runs as <tmp>/mlx_lm.server, a link to mlxsim: removing the
	// link is the fault that keeps it from starting again.
	engine := filepath.Join(t.TempDir(), "mlx_lm.server")
	require.NoError(t, os.Symlink(binary(t, "MLXSIM"), engine))

	s, otelcolPort := startLiveCollector(t, engine)
	obs := startLiveObs(t, s, otelcolPort, hook, mail)
	vm := obs.vm

	s.waitFor("prometheus/supervisor", 60*time.Second, "mlx_server_ready 1", func(sc *promtext.Scrape) bool {
		v, _ := sc.Value("mlx_server_ready")
		return v == 1
	})
	t.Logf("engine ready after %s", time.Since(began).Round(100*time.Millisecond))

	// Traffic through the proxy: each kind once, checked, then the same mix
	// in the background until the fault, so every rate has samples.
	proxy := fmt.Sprintf("http://127.0.0.1:%d", s.ports["mlx_proxy"])
	for _, r := range liveRequests {
		liveSend(t, proxy, r)
	}
	traffic := startLiveTraffic(proxy)
	trafficStopped := false
	stopTraffic := func() {
		if !trafficStopped {
			trafficStopped = true
			if errs := traffic.stop(); len(errs) > 0 {
				t.Errorf("background traffic through the proxy failed %d times while the engine was healthy; first: %s", len(errs), errs[0])
			}
		}
	}
	t.Cleanup(stopTraffic)

	t.Run("TargetsUp", func(t *testing.T) {
		liveCheckTargets(t, vm, obs.scrapeJobs)
	})

	// Queries that had data in the healthy phase, by key.
	hadData := map[string]bool{}
	queries, err := promqlnames.LoadDashboardQueries(filepath.Join(repoRoot, "dashboards"))
	require.NoError(t, err)
	expectedEmpty, err := promqlnames.LoadExpectedEmpty(filepath.Join(repoRoot, "dashboards", "expected-empty.yml"))
	require.NoError(t, err)

	t.Run("DashboardQueriesReturnData", func(t *testing.T) {
		liveCheckDashboards(t, vm, queries, expectedEmpty, hadData)
	})

	t.Run("NoSeriesNameInTwoJobs", func(t *testing.T) {
		liveCheckNoSharedNames(t, vm, began)
	})

	healthyAlerts := liveFiringAlerts(t, vm)
	if len(healthyAlerts) > 0 {
		t.Logf("alerts firing while the engine was healthy: %s", strings.Join(healthyAlerts, ", "))
	}

	// The fault: the engine is killed (as the OOM killer or a Metal abort
	// would) and its program is gone, so every restart fails (exec_failed)
	// and mlx_server_up stays 0.
	stopTraffic()
	faultAt := time.Now()
	t.Run("AlertEndToEnd", func(t *testing.T) {
		pids := processesRunning(engine, strconv.Itoa(s.enginePort))
		require.Len(t, pids, 1, "one engine process runs as %s", engine)
		require.NoError(t, os.Remove(engine))
		require.NoError(t, syscall.Kill(pids[0], syscall.SIGKILL))
		s.waitFor("prometheus/supervisor", 30*time.Second, "a failed restart (exec_failed)", func(sc *promtext.Scrape) bool {
			v, _ := sc.Value("mlx_server_crashes_total", "reason", "exec_failed")
			up, ok := sc.Value("mlx_server_up")
			return v >= 1 && ok && up == 0
		})

		got := hook.waitFor(t, 4*time.Minute, "MLXServerDown or MLXServerCrashLoop at the on-call webhook", func(n liveNotification) bool {
			if n.Path != "/oncall" || n.Receiver != "oncall" {
				return false
			}
			for _, a := range n.Alerts {
				if a.Status == "firing" && (a.Labels["alertname"] == "MLXServerDown" || a.Labels["alertname"] == "MLXServerCrashLoop") {
					return true
				}
			}
			return false
		})
		t.Logf("paged %s after the fault", time.Since(faultAt).Round(100*time.Millisecond))
		for _, a := range got.Alerts {
			if a.Labels["alertname"] != "MLXServerDown" && a.Labels["alertname"] != "MLXServerCrashLoop" {
				continue
			}
			assert.Equal(t, "critical", a.Labels["severity"], "%s", a.Labels["alertname"])
			assert.Equal(t, "mlx-supervisor", a.Labels["job"], "%s", a.Labels["alertname"])
			assert.Equal(t, "rank0", a.Labels["node"], "%s: the scrape target's node", a.Labels["alertname"])
			assert.Equal(t, "ml-platform", a.Labels["team"], "%s", a.Labels["alertname"])
			assert.Contains(t, a.Annotations["summary"], "rank0", "%s: the summary template is filled", a.Labels["alertname"])
		}
		// Routing: critical pages on-call, everything else goes to the alert hook.
		for _, n := range hook.all() {
			for _, a := range n.Alerts {
				if n.Path == "/oncall" {
					assert.Equal(t, "critical", a.Labels["severity"], "%s reached on-call", a.Labels["alertname"])
				} else {
					assert.NotEqual(t, "critical", a.Labels["severity"], "%s reached %s, not on-call", a.Labels["alertname"], n.Path)
				}
			}
		}
		// The same page by email, to the on-call address only: Alertmanager's
		// email notifier through a real SMTP conversation.
		page := mail.waitFor(t, time.Minute, "the page by email to "+liveOncallEmail, func(m liveMail) bool {
			subject := m.Header("Subject")
			return slices.Contains(m.To, liveOncallEmail) && strings.Contains(subject, "FIRING") &&
				(strings.Contains(subject, "MLXServerDown") || strings.Contains(subject, "MLXServerCrashLoop"))
		})
		t.Logf("paged by email: %s", page.Header("Subject"))
		assert.Equal(t, liveMailFrom, page.From, "the envelope sender is SMTP_FROM")
		assert.Contains(t, page.Data, "rank0", "the message names the node")

		// vmalert wrote the alert back (ALERTS), which the dashboards show;
		// its remote write and VictoriaMetrics' ingestion take a moment.
		require.Eventually(t, func() bool {
			res, err := vm.query(`ALERTS{alertname=~"MLXServerDown|MLXServerCrashLoop", alertstate="firing", job="mlx-supervisor"}`)
			return err == nil && len(res) > 0
		}, 30*time.Second, time.Second, "ALERTS in VictoriaMetrics has the firing alert")
	})

	t.Run("FaultQueriesReturnData", func(t *testing.T) {
		liveCheckFaultQueries(t, vm, queries, expectedEmpty, hadData)
	})

	t.Run("RulesEvaluateWithoutError", func(t *testing.T) {
		liveCheckRules(t, vm)
	})

	t.Run("EveryNameReadExists", func(t *testing.T) {
		liveCheckNames(t, vm, began, queries)
	})
}

// startLiveCollector runs the demo with the engine program at engine and the
// collector's own telemetry on, at a free port. It returns the stack and
// that port.
func startLiveCollector(t *testing.T, engine string) (*stack, int) {
	t.Helper()
	j := startJaeger(t)
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		overlay := telemetryOverlay(t, port)
		s := startCollector(t, collectorOptions{
			configs: append(slices.Clone(demoConfigs), overlay),
			// The harness turns the collector's telemetry off; job
			// mlx-otelcol scrapes it.
			sets: []string{"service::telemetry::metrics::level=normal",
				// Spans are stored in a real Jaeger, and an Opik that does
				// not answer fails every export it gets (no retries): the
				// spans panels have both lines.
				"exporters::otlp_grpc/jaeger::endpoint=" + j.otlp,
				fmt.Sprintf("exporters::opik::endpoint=http://127.0.0.1:%d/api", freePort(t)),
				"exporters::opik::retry_on_failure::enabled=false",
				// The judge reads that Jaeger and judges through the proxy.
				"receivers::mlx_judge::jaeger::endpoint=http://" + j.query,
				"receivers::mlx_judge::interval=2s",
			},
			env: map[string]string{
				"MLXSIM":            engine,
				"MLXSIM_LOAD_DELAY": "1s",
				// The series name their node themselves (the scrape
				// config keeps them, honor_labels): rank0, as the rendered
				// env of a ring's first node says.
				"MLX_NODE_NAME": "rank0",
				// On a Mac the engine's model is in the Hugging Face cache,
				// where the KV-cache receiver reads its shape; the demo
				// engine downloads nothing, so the test lays one out.
				"HF_HUB_CACHE": hubCacheWithModel(t),
			},
		})
		// freePort may hand out a port the harness drew as well.
		if port != s.enginePort && !slices.Contains(liveValues(s.ports), port) {
			return s, port
		}
		s.stop()
		if attempt == 3 {
			t.Fatalf("no free port for the collector's telemetry")
		}
	}
}

func liveValues(m map[string]int) []int {
	var out []int
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// liveObs is the running observability stack.
type liveObs struct {
	vm         liveVM
	dir        string
	scrapeJobs []string // job_name of every scrape config, in file order
	amURL      string   // Alertmanager's API
}

// startLiveObs renders the shipped configs for this collector's ports and
// runs VictoriaMetrics, vmalert and Alertmanager with scripts/obs-stack.sh
// (which builds the stores first when one is missing), with email on
// through mail for both receivers.
func startLiveObs(t *testing.T, s *stack, otelcolPort int, hook *liveWebhook, mail *liveSMTP) *liveObs {
	t.Helper()
	used := append(liveValues(s.ports), s.enginePort, otelcolPort, hook.port, mail.port)
	pick := func() int {
		for {
			p := freePort(t)
			if !slices.Contains(used, p) {
				used = append(used, p)
				return p
			}
		}
	}
	return runObsStack(t, hook, map[string]string{
		"PROXY_PORT":       strconv.Itoa(s.ports["mlx_proxy"]),
		"HW_PORT":          strconv.Itoa(s.ports["prometheus/hw"]),
		"KV_PORT":          strconv.Itoa(s.ports["prometheus/kv"]),
		"SUPERVISOR_PORT":  strconv.Itoa(s.ports["prometheus/supervisor"]),
		"LOGPIPE_PORT":     strconv.Itoa(s.ports["prometheus/logs"]),
		"OTELCOL_PORT":     strconv.Itoa(otelcolPort),
		"SMTP_SMARTHOST":   mail.addr,
		"SMTP_FROM":        liveMailFrom,
		"SMTP_REQUIRE_TLS": "false",
		"ONCALL_EMAIL_TO":  liveOncallEmail,
		"ALERT_EMAIL_TO":   "team@mlx.test",
	}, pick, filepath.Join(repoRoot, "config/scrape/loopback.env"))
}

const (
	liveMailFrom    = "alertmanager@mlx.test"
	liveOncallEmail = "oncall@mlx.test"
)

// runObsStack starts scripts/obs-stack.sh with the shipped configs rendered
// with the env files and then env, the stack's own ports drawn by pick,
// test timings, and hook's paths as the webhooks; it stops it at cleanup.
func runObsStack(t *testing.T, hook *liveWebhook, env map[string]string, pick func() int, envFiles ...string) *liveObs {
	t.Helper()
	dir := t.TempDir()
	vmPort, vmalertPort, amPort, vlogsPort := pick(), pick(), pick(), pick()
	for k, v := range map[string]string{
		"VM_PORT":            strconv.Itoa(vmPort),
		"VMALERT_PORT":       strconv.Itoa(vmalertPort),
		"ALERTMANAGER_PORT":  strconv.Itoa(amPort),
		"VLOGS_PORT":         strconv.Itoa(vlogsPort),
		"SCRAPE_INTERVAL":    "2s",
		"SCRAPE_TIMEOUT":     "2s",
		"ONCALL_WEBHOOK_URL": hook.url + "/oncall",
		"ALERT_WEBHOOK_URL":  hook.url + "/alert",
		"ALERT_GROUP_WAIT":   "1s",
	} {
		if _, set := env[k]; !set {
			env[k] = v
		}
	}
	var envFile strings.Builder
	envFile.WriteString("# " + t.Name() + ": this run's ports and test-only timings.\n")
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&envFile, "%s=%s\n", k, env[k])
	}
	envPath := filepath.Join(dir, "test.env")
	require.NoError(t, os.WriteFile(envPath, []byte(envFile.String()), 0o600))

	obsDir := filepath.Join(dir, "obs")
	script := filepath.Join(repoRoot, "scripts", "obs-stack.sh")
	jaegerEnv := []string{
		fmt.Sprintf("JAEGER_QUERY_HTTP=127.0.0.1:%d", pick()), fmt.Sprintf("JAEGER_QUERY_GRPC=127.0.0.1:%d", pick()),
		fmt.Sprintf("JAEGER_OTLP_GRPC=127.0.0.1:%d", pick()), fmt.Sprintf("JAEGER_OTLP_HTTP=127.0.0.1:%d", pick()),
		"JAEGER_DATA_DIR=" + filepath.Join(dir, "jaeger"),
	}
	run := func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, script, args...)
		cmd.Dir = repoRoot
		cmd.Env = append(liveObsEnv(obsDir), jaegerEnv...)
		return cmd.CombinedOutput()
	}
	logTails := func() {
		for _, name := range []string{"victoria-metrics", "vmalert", "alertmanager", "victoria-logs", "jaeger"} {
			if b, err := os.ReadFile(filepath.Join(obsDir, name+".log")); err == nil {
				t.Logf("%s.log:\n%s", name, tailOf(b, 4000))
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // apt-get may run first
	defer cancel()
	args := []string{"start"}
	for _, f := range envFiles {
		args = append(args, "-e", f)
	}
	out, err := run(ctx, append(args, "-e", envPath)...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := run(ctx, "stop"); err != nil {
			t.Errorf("obs-stack.sh stop: %v\n%s", err, out)
		}
		if t.Failed() {
			logTails()
		}
	})
	if err != nil {
		logTails()
		t.Fatalf("obs-stack.sh start: %v\n%s", err, out)
	}
	t.Logf("obs-stack.sh start:\n%s", out)

	scrape, err := os.ReadFile(filepath.Join(obsDir, "scrape.yml"))
	require.NoError(t, err)
	var jobs []string
	for _, line := range strings.Split(string(scrape), "\n") {
		if j, ok := strings.CutPrefix(strings.TrimSpace(line), "- job_name:"); ok {
			jobs = append(jobs, strings.Trim(strings.TrimSpace(j), `"'`))
		}
	}
	require.NotEmpty(t, jobs, "the rendered scrape.yml has jobs")
	return &liveObs{
		vm:         liveVM{base: fmt.Sprintf("http://127.0.0.1:%d", vmPort), vmalert: fmt.Sprintf("http://127.0.0.1:%d", vmalertPort)},
		dir:        obsDir,
		scrapeJobs: jobs,
		amURL:      fmt.Sprintf("http://127.0.0.1:%d", amPort),
	}
}

// liveObsEnv is the test's environment for obs-stack.sh: without any of
// render-config.sh's variables (the environment would win over the test's
// env file), with the test's state directory and flags.
func liveObsEnv(obsDir string) []string {
	drop := map[string]bool{"OBS_DIR": true, "VM_FLAGS": true, "VMALERT_FLAGS": true, "AM_FLAGS": true}
	for _, v := range []string{"RANK0_ADDR", "RANK1_ADDR", "OBS_ADDR", "PROXY_PORT", "HW_PORT", "KV_PORT",
		"SUPERVISOR_PORT", "LOGPIPE_PORT", "OTELCOL_PORT", "RANK1_HW_PORT", "RANK1_OTELCOL_PORT", "VM_PORT",
		"VMALERT_PORT", "ALERTMANAGER_PORT", "SCRAPE_INTERVAL", "SCRAPE_TIMEOUT", "ONCALL_WEBHOOK_URL",
		"ALERT_WEBHOOK_URL", "ALERT_GROUP_WAIT", "ALERT_GROUP_INTERVAL", "RANK0_RING_IP", "RANK1_RING_IP", "VLOGS_PORT",
		"SMTP_SMARTHOST", "SMTP_FROM", "SMTP_AUTH_USERNAME", "SMTP_AUTH_PASSWORD", "SMTP_REQUIRE_TLS",
		"ONCALL_EMAIL_TO", "ALERT_EMAIL_TO", "ONCALL_SLACK_WEBHOOK_URL", "ALERT_SLACK_WEBHOOK_URL",
		"ONCALL_DISCORD_WEBHOOK_URL", "ALERT_DISCORD_WEBHOOK_URL", "TELEGRAM_BOT_TOKEN", "ONCALL_TELEGRAM_CHAT_ID",
		"ALERT_TELEGRAM_CHAT_ID", "PUSHOVER_TOKEN", "ONCALL_PUSHOVER_USER_KEY", "ALERT_PUSHOVER_USER_KEY"} {
		drop[v] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env,
		"OBS_DIR="+obsDir,
		// A sample is queryable 1 s after its scrape (default 30 s).
		"VM_FLAGS=-search.latencyOffset=1s",
		// Every group in rules/ has its own interval; recorded series and
		// alert state go back to VictoriaMetrics within a second, and a rule
		// reads the data up to VictoriaMetrics' latency offset (1 s above)
		// before its evaluation time, not 30 s (vmalert's default).
		"VMALERT_FLAGS=-evaluationInterval=15s -remoteWrite.flushInterval=1s -rule.evalDelay=1s",
	)
}

// liveCheckTargets waits until VictoriaMetrics has scraped every target of
// every job of the rendered config, and each is up.
func liveCheckTargets(t *testing.T, vm liveVM, jobs []string) {
	deadline := time.Now().Add(60 * time.Second)
	var problems []string
	for {
		targets, err := vm.targets()
		problems = problems[:0]
		if err != nil {
			problems = append(problems, err.Error())
		} else {
			byJob := map[string]int{}
			for _, tg := range targets {
				job := tg.Labels["job"]
				byJob[job]++
				if tg.Health != "up" {
					problems = append(problems, fmt.Sprintf("job %s target %s is %q (last error: %s)", job, tg.ScrapeURL, tg.Health, tg.LastError))
				}
			}
			for _, j := range jobs {
				if byJob[j] == 0 {
					problems = append(problems, fmt.Sprintf("job %s has no target", j))
				}
			}
		}
		if len(problems) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scrape targets not all up after 60 s:\n  %s", strings.Join(problems, "\n  "))
		}
		time.Sleep(time.Second)
	}
	// The same seen through the up series the rules read.
	res, err := vm.query(`up`)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, r := range res {
		seen[r.Metric["job"]] = true
		assert.Equal(t, "1", r.value(), "up{job=%q, instance=%q}", r.Metric["job"], r.Metric["instance"])
	}
	for _, j := range jobs {
		assert.True(t, seen[j], "up{job=%q} exists", j)
	}
}

// liveCheckDashboards queries every panel target and variable of the
// dashboards (Grafana variables as All, intervals as a 1-hour dashboard's)
// until each has returned data once, and fails for those that never did and
// are not in dashboards/expected-empty.yml. hadData collects the keys that
// had data.
func liveCheckDashboards(t *testing.T, vm liveVM, queries []promqlnames.Query, expectedEmpty map[string]string, hadData map[string]bool) {
	pending := map[string]string{} // key -> expression
	for _, q := range queries {
		if q.Kind == "annotation" {
			continue // the firing alerts: checked after the fault
		}
		e, ok := q.MetricsQL(nil)
		if !ok {
			continue
		}
		pending[q.Key()] = e
	}
	// The recording rules run every 30 s, the SLO panels read them; an
	// unlisted query has until the deadline to show data.
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	var lastData time.Duration
	for {
		for k, e := range pending {
			res, err := vm.query(e)
			if err != nil {
				t.Errorf("%s: %s: %v", k, e, err)
				delete(pending, k)
				continue
			}
			if len(res) > 0 {
				hadData[k] = true
				delete(pending, k)
				lastData = time.Since(start)
			}
		}
		unlisted := 0
		for k := range pending {
			if _, ok := expectedEmpty[k]; !ok {
				unlisted++
			}
		}
		if unlisted == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	var empty, allowed []string
	for k, e := range pending {
		if why, ok := expectedEmpty[k]; ok {
			allowed = append(allowed, fmt.Sprintf("%s (%s)", k, why))
			continue
		}
		empty = append(empty, fmt.Sprintf("%s: %s", k, e))
	}
	sort.Strings(empty)
	sort.Strings(allowed)
	var stale []string
	for k := range expectedEmpty {
		if hadData[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	t.Logf("%d dashboard queries, %d with data (the last after %s); empty as expected-empty.yml allows: %d",
		len(hadData)+len(pending), len(hadData), lastData.Round(time.Second), len(allowed))
	for _, a := range allowed {
		t.Logf("  empty, allowed: %s", a)
	}
	if len(stale) > 0 {
		t.Logf("listed in expected-empty.yml but have data on this stack: %s", strings.Join(stale, ", "))
	}
	if len(empty) > 0 {
		t.Errorf("%d dashboard queries returned no data and are not in dashboards/expected-empty.yml:\n  %s", len(empty), strings.Join(empty, "\n  "))
	}
}

// liveCheckFaultQueries runs, with the engine down and its alert firing, the
// queries that had no data before: the annotations (the firing alerts) must
// have some now; the fault-only ones are reported.
func liveCheckFaultQueries(t *testing.T, vm liveVM, queries []promqlnames.Query, expectedEmpty map[string]string, hadData map[string]bool) {
	var now []string
	for _, q := range queries {
		if hadData[q.Key()] {
			continue
		}
		e, ok := q.MetricsQL(nil)
		if !ok {
			continue
		}
		res, err := vm.query(e)
		if err != nil {
			t.Errorf("%s: %s: %v", q.Key(), e, err)
			continue
		}
		if q.Kind == "annotation" {
			assert.NotEmpty(t, res, "%s: %s returns the firing alert", q.Key(), e)
			continue
		}
		if len(res) > 0 {
			now = append(now, q.Key())
		} else if why := expectedEmpty[q.Key()]; strings.HasPrefix(why, "fault-only") {
			t.Logf("still empty under this fault (the listed fault is another): %s (%s)", q.Key(), why)
		}
	}
	sort.Strings(now)
	if len(now) > 0 {
		t.Logf("with data only under the fault: %s", strings.Join(now, ", "))
	}
}

// liveCheckNoSharedNames fails for a series name that two of the
// collector's jobs (mlx-*) serve. up and scrape_* (every job has them),
// ALERTS and the recorded series (vmalert's) are left out.
func liveCheckNoSharedNames(t *testing.T, vm liveVM, since time.Time) {
	rules, err := promqlnames.LoadRules(filepath.Join(repoRoot, "rules", "*.yml"))
	require.NoError(t, err)
	skip := map[string]bool{}
	for _, n := range append(slices.Clone(promqlnames.GeneratedNames), promqlnames.RecordedNames(rules)...) {
		skip[n] = true
	}
	series, err := vm.series(`{job=~"mlx-.*"}`, since)
	require.NoError(t, err)
	jobs := map[string]map[string]bool{}
	for _, s := range series {
		n := s["__name__"]
		if skip[n] || strings.HasPrefix(n, "scrape_") {
			continue
		}
		// The fleet contract's series (internal/fleet) are one family on
		// every role's port, told apart by role: each role's once.
		if r, ok := s["role"]; ok && strings.HasPrefix(n, "mlx_agent_") {
			n += `{role="` + r + `"}`
		}
		if jobs[n] == nil {
			jobs[n] = map[string]bool{}
		}
		jobs[n][s["job"]] = true
	}
	perJob := map[string]int{}
	var shared []string
	for n, js := range jobs {
		for j := range js {
			perJob[j]++
		}
		if len(js) > 1 {
			shared = append(shared, fmt.Sprintf("%s (jobs %s)", n, strings.Join(liveKeys(js), ", ")))
		}
	}
	sort.Strings(shared)
	t.Logf("series names per job: %v", perJob)
	assert.Empty(t, shared, "series names served by more than one job")
}

// liveCheckNames fails for every metric name a rule or a dashboard query
// reads that VictoriaMetrics has never stored since the test began, unless
// promqlnames.MayBeAbsent allows it.
func liveCheckNames(t *testing.T, vm liveVM, since time.Time, queries []promqlnames.Query) {
	rules, err := promqlnames.LoadRules(filepath.Join(repoRoot, "rules", "*.yml"))
	require.NoError(t, err)
	users := map[string][]string{} // name -> who reads it
	for _, r := range rules {
		names, err := promqlnames.Names(r.Expr)
		if err != nil {
			t.Errorf("rule %s (%s): %v", r.Name(), filepath.Base(r.File), err)
			continue
		}
		for _, n := range names {
			users[n] = append(users[n], fmt.Sprintf("rule %s (%s)", r.Name(), filepath.Base(r.File)))
		}
	}
	for _, q := range queries {
		e, ok := q.MetricsQL(nil)
		if !ok {
			continue
		}
		names, err := promqlnames.Names(e)
		if err != nil {
			t.Errorf("dashboard query %s: %v", q.Key(), err)
			continue
		}
		for _, n := range names {
			users[n] = append(users[n], "dashboard "+q.Key())
		}
	}

	var missing []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		stored, err := vm.names(since)
		require.NoError(t, err)
		missing = missing[:0]
		var allowed []string
		for n, who := range users {
			if stored[n] {
				continue
			}
			if why, ok := promqlnames.MayBeAbsent[n]; ok {
				allowed = append(allowed, fmt.Sprintf("%s (%s)", n, why))
				continue
			}
			missing = append(missing, fmt.Sprintf("%s, read by %s", n, liveSummary(who)))
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			sort.Strings(allowed)
			t.Logf("%d names read by rules and dashboards; absent as promqlnames.MayBeAbsent allows: %d", len(users), len(allowed))
			for _, a := range allowed {
				t.Logf("  absent, allowed: %s", a)
			}
			var presentAnyway []string
			for n := range promqlnames.MayBeAbsent {
				if stored[n] {
					presentAnyway = append(presentAnyway, n)
				}
			}
			sort.Strings(presentAnyway)
			if len(presentAnyway) > 0 {
				t.Logf("in MayBeAbsent but present on this stack: %s", strings.Join(presentAnyway, ", "))
			}
			break
		}
		time.Sleep(2 * time.Second)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d metric names read by rules or dashboards are not in VictoriaMetrics (and not in promqlnames.MayBeAbsent):\n  %s",
			len(missing), strings.Join(missing, "\n  "))
	}
}

// liveCheckRules waits until vmalert has evaluated every rule of rules/*.yml
// at least once, and fails for a rule it does not have or whose last
// evaluation failed.
func liveCheckRules(t *testing.T, vm liveVM) {
	rules, err := promqlnames.LoadRules(filepath.Join(repoRoot, "rules", "*.yml"))
	require.NoError(t, err)
	var problems []string
	deadline := time.Now().Add(time.Minute)
	for {
		loaded, err := vm.rules()
		require.NoError(t, err)
		problems = problems[:0]
		for _, r := range rules {
			l, ok := loaded[r.Group+"/"+r.Name()]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s/%s (%s): not loaded by vmalert", r.Group, r.Name(), filepath.Base(r.File)))
			case l.LastError != "":
				problems = append(problems, fmt.Sprintf("%s/%s (%s): %s", r.Group, r.Name(), filepath.Base(r.File), l.LastError))
			case l.LastEvaluation.IsZero() || l.LastEvaluation.Year() < 2000:
				problems = append(problems, fmt.Sprintf("%s/%s (%s): not evaluated yet", r.Group, r.Name(), filepath.Base(r.File)))
			}
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		t.Errorf("%d of %d rules did not evaluate cleanly in vmalert:\n  %s", len(problems), len(rules), strings.Join(problems, "\n  "))
	}
}

// liveFiringAlerts lists the alerts firing now (ALERTS), as name{node}.
func liveFiringAlerts(t *testing.T, vm liveVM) []string {
	res, err := vm.query(`ALERTS{alertstate="firing"}`)
	if err != nil {
		t.Logf("ALERTS: %v", err)
		return nil
	}
	var out []string
	for _, r := range res {
		out = append(out, fmt.Sprintf("%s{job=%q,node=%q,severity=%q}", r.Metric["alertname"], r.Metric["job"], r.Metric["node"], r.Metric["severity"]))
	}
	sort.Strings(out)
	return out
}

func liveKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// liveSummary shortens a long list of readers.
func liveSummary(who []string) string {
	if len(who) <= 3 {
		return strings.Join(who, "; ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(who[:3], "; "), len(who)-3)
}
