package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/standins/opiktest"
)

func standIn(t *testing.T) *opiktest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := opiktest.New()
	if err := s.Listen(addr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func judgeEngine(t *testing.T) string {
	e := mlxsim.New(mlxsim.Options{PrefillTPS: 1e6, DecodeTPS: 1e5}, io.Discard)
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { e.Close(); srv.Close() })
	return srv.URL + "/v1"
}

func runArgs(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, args, &out, &errOut)
	return code, out.String() + errOut.String()
}

// --once --dry-run judges and prints, and writes nothing; --once writes
// the scores on the trace's Opik id; the next --once finds it judged.
func TestOncePasses(t *testing.T) {
	opik := standIn(t)
	tr := opiktest.ProxyTrace{TraceID: pcommon.TraceID{3}, SpanID: pcommon.SpanID{3}, Start: time.Now(),
		Model: "mlx-community/Qwen3-4B-4bit", Question: "What is a KV cache?", Answer: "The keys and values of earlier tokens."}
	opik.Put(tr.Trace("mlx"))
	base := strings.TrimSuffix(opik.URL(), "/api")
	args := []string{"--opik-base", base, "--judge-url", judgeEngine(t), "--max-in-flight", "0", "--once"}

	code, out := runArgs(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "scored "+tr.OpikID()[:12]+" -> {") || !strings.Contains(out, "dry run: nothing written") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if s := opik.Scores(tr.OpikID()); len(s) != 0 {
		t.Fatalf("a dry run wrote %v", s)
	}

	code, out = runArgs(t, args...)
	if code != 0 || !strings.Contains(out, "wrote 3 feedback scores") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	prompt, _ := judge.Render(judge.DefaultPrompt, tr.Question, tr.Answer)
	for _, s := range opik.Scores(tr.OpikID()) {
		if s.Value != mlxsim.JudgeScore(prompt, s.Name) || s.CategoryName != "judge" {
			t.Errorf("score %+v", s)
		}
	}
	if code, out = runArgs(t, args...); code != 0 || !strings.Contains(out, "1 traces, 0 judged") {
		t.Errorf("second pass: exit %d\n%s", code, out)
	}
}

func TestOnceWithOpikDownFails(t *testing.T) {
	opik := standIn(t)
	base := strings.TrimSuffix(opik.URL(), "/api")
	opik.Down()
	code, out := runArgs(t, "--opik-base", base, "--once")
	if code != 1 || !strings.Contains(out, "traces unreachable") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestFlags(t *testing.T) {
	o, err := parseFlags([]string{"--interval", "15", "--judge-url", "http://10.0.0.2:8080/v1", "--opik-base", "http://opik:5173"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.interval != 15*time.Second || o.metricsURL != "http://10.0.0.2:8080/metrics" || o.opikAPI() != "http://opik:5173/api" {
		t.Errorf("%+v %s", o, o.opikAPI())
	}
	if o, _ := parseFlags([]string{"--interval", "2m", "--opik-base", "http://opik/api"}, io.Discard); o.interval != 2*time.Minute || o.opikAPI() != "http://opik/api" {
		t.Errorf("%+v", o)
	}
	t.Setenv("JUDGE_API_KEY", "sk-env")
	o, err = parseFlags([]string{"--sampling-rate", "0.5", "--origins", "user, bench", "--models", "a,b", "--min-answer-length", "3", "--max-per-minute", "0"}, io.Discard)
	if err != nil || o.samplingRate != 0.5 || strings.Join(o.origins, "|") != "user|bench" || strings.Join(o.models, "|") != "a|b" ||
		o.minAnswer != 3 || o.maxPerMinute != 0 || o.judgeKey != "sk-env" {
		t.Errorf("%+v %v", o, err)
	}
	if o, _ := parseFlags(nil, io.Discard); strings.Join(o.origins, ",") != "user" || o.maxPerMinute != 30 || o.samplingRate != 1 {
		t.Errorf("defaults %+v", o)
	}
	for _, bad := range [][]string{{"--limit", "0"}, {"--interval", "soon"}, {"--provision-dashboard"}, {"extra"},
		{"--sampling-rate", "0"}, {"--sampling-rate", "1.5"}, {"--max-per-minute", "-1"}, {"--thinking", "maybe"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// Provisioning twice leaves one dashboard of that name, whose project
// widgets name the project by id, laid out on Opik's 6-column grid.
func TestProvisionDashboardIsIdempotent(t *testing.T) {
	opik := standIn(t)
	base := strings.TrimSuffix(opik.URL(), "/api")
	for i := range 2 {
		if code, out := runArgs(t, "--opik-base", base, "--provision-dashboard"); code != 0 || !strings.Contains(out, "verified") {
			t.Fatalf("run %d: exit %d\n%s", i, code, out)
		} else if i == 1 && !strings.Contains(out, "deleted existing dashboard") {
			t.Errorf("second run did not replace the first:\n%s", out)
		}
	}
	ds := opik.Dashboards()
	if len(ds) != 1 || ds[0].Name != dashboardName || ds[0].Type != "multi_project" {
		t.Fatalf("dashboards %+v", ds)
	}
	projectID := opik.ProjectID("mlx")
	if projectID == "" || ds[0].ProjectID != projectID {
		t.Errorf("project %q, dashboard's %q", projectID, ds[0].ProjectID)
	}
	var cfg struct {
		Version  int       `json:"version"`
		Sections []section `json:"sections"`
	}
	if err := json.Unmarshal(ds[0].Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Version != configVersion || len(cfg.Sections) != 2 {
		t.Fatalf("config %+v", cfg)
	}
	metrics := map[string]bool{}
	for _, s := range cfg.Sections {
		if len(s.Layout) != len(s.Widgets) {
			t.Errorf("%s: %d layout items for %d widgets", s.Title, len(s.Layout), len(s.Widgets))
		}
		for i, w := range s.Widgets {
			l := s.Layout[i]
			if l.I != w.ID || l.X < 0 || l.X+l.W > gridColumns {
				t.Errorf("%s: layout %+v of %s", s.Title, l, w.ID)
			}
			switch w.Type {
			case "project_stats_card", "project_metrics":
				if w.Config["projectId"] != projectID {
					t.Errorf("%s has projectId %v", w.Title, w.Config["projectId"])
				}
			case "text_markdown":
				if w.Config["content"] == "" {
					t.Errorf("empty markdown")
				}
			default:
				t.Errorf("widget type %q is not one of a multi_project dashboard", w.Type)
			}
			if m, ok := w.Config["metric"].(string); ok {
				metrics[m] = true
			}
		}
	}
	for _, s := range judge.DefaultScores {
		if !metrics["feedback_scores."+s] {
			t.Errorf("no stats card for the judge's %s", s)
		}
	}
}

// --help (and a usage error) never prints the secrets the environment
// holds; they are still the defaults, and a flag overrides them.
func TestHelpPrintsNoSecret(t *testing.T) {
	t.Setenv("OPIK_API_KEY", "opik-secret-1234")
	t.Setenv("MLX_METRICS_TOKEN", "metrics-secret-5678")
	for _, args := range [][]string{{"--help"}, {"--no-such-flag"}} {
		var out strings.Builder
		_, err := parseFlags(args, &out)
		if err == nil {
			t.Fatalf("%v: no error", args)
		}
		for _, secret := range []string{"opik-secret-1234", "metrics-secret-5678"} {
			if strings.Contains(out.String(), secret) {
				t.Errorf("%v prints %s:\n%s", args, secret, out.String())
			}
		}
	}
	o, err := parseFlags(nil, io.Discard)
	if err != nil || o.apiKey != "opik-secret-1234" || o.metricsToken != "metrics-secret-5678" {
		t.Errorf("the environment's secrets are not the defaults: %+v %v", o, err)
	}
	if o, _ := parseFlags([]string{"--opik-api-key", "k", "--metrics-token="}, io.Discard); o.apiKey != "k" || o.metricsToken != "" {
		t.Errorf("a flag does not override the environment: %q %q", o.apiKey, o.metricsToken)
	}
}
