// Command mlxjudge runs the judge loop of the mlx_judge receiver
// (internal/judge) outside the collector, with the original
// opik_evaluator.py's flags: one-off passes (--once), dry runs that write
// nothing (--dry-run), or a loop every --interval.
//
//	mlxjudge --once --dry-run
//	mlxjudge --opik-base http://opik-host:5173 --judge-url http://127.0.0.1:8080/v1
//	OPIK_BASE=... JUDGE_URL=... mlxjudge --interval 15
//
// Without --opik-base (or OPIK_BASE) it reads the proxy's traces from
// Jaeger and writes no scores. --provision-dashboard creates or replaces
// the original's Opik dashboard and exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

type options struct {
	opikBase, project, jaegerURL, service, judgeURL, model, metricsURL string
	metricsToken                                                       string
	apiKey, workspace                                                  string
	judgeKey, thinking                                                 string
	interval, lookback, timeout                                        time.Duration
	limit, maxPerMinute, minAnswer                                     int
	maxInFlight, maxTokens                                             int64
	samplingRate                                                       float64
	origins, models                                                    []string
	once, dryRun, provision                                            bool
}

// list is a comma-separated flag.
type list struct{ l *[]string }

func (f list) String() string {
	if f.l == nil {
		return ""
	}
	return strings.Join(*f.l, ",")
}

func (f list) Set(v string) error {
	*f.l = nil
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*f.l = append(*f.l, s)
		}
	}
	return nil
}

// secondsOrDuration takes the original's --interval 15 (seconds) or a Go
// duration (15s).
type secondsOrDuration struct{ d *time.Duration }

func (s secondsOrDuration) String() string {
	if s.d == nil {
		return ""
	}
	return s.d.String()
}

func (s secondsOrDuration) Set(v string) error {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		*s.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is neither seconds nor a duration", v)
	}
	*s.d = d
	return nil
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{interval: 10 * time.Second, origins: []string{judge.OriginUser}}
	fs := flag.NewFlagSet("mlxjudge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.opikBase, "opik-base", env("OPIK_BASE", ""), "Opik's base URL, as the original took it (http://opik-host:5173; /api is added unless there); empty: read Jaeger, write no scores")
	fs.StringVar(&o.project, "project", env("OPIK_PROJECT", "mlx"), "the Opik project")
	// The secrets' defaults are read from the environment after Parse, not
	// given as flag defaults, which --help and a usage error print.
	fs.StringVar(&o.apiKey, "opik-api-key", "", "Opik Cloud's API key (default: $OPIK_API_KEY)")
	fs.StringVar(&o.workspace, "opik-workspace", env("OPIK_WORKSPACE", ""), "Opik Cloud's workspace")
	fs.StringVar(&o.jaegerURL, "jaeger-url", env("JAEGER_URL", "http://127.0.0.1:16686"), "Jaeger's query address, read when there is no Opik")
	fs.StringVar(&o.service, "service", "mlx-metrics-proxy", "the proxy's service.name in Jaeger")
	fs.DurationVar(&o.lookback, "lookback", 15*time.Minute, "how far back Jaeger is searched")
	fs.StringVar(&o.judgeURL, "judge-url", env("JUDGE_URL", "http://127.0.0.1:8080/v1"), "the OpenAI-compatible endpoint that judges (the MLX proxy)")
	fs.StringVar(&o.model, "model", env("JUDGE_MODEL", "default_model"), "the judge model (default_model: the one the engine serves)")
	fs.StringVar(&o.judgeKey, "judge-api-key", "", "bearer key of the judge endpoint (default: $JUDGE_API_KEY)")
	fs.StringVar(&o.thinking, "thinking", "auto", "the judge's thinking: off (chat_template_kwargs.enable_thinking false), unchanged (OpenAI's API refuses the field), auto (off for a judge on this machine or the local network)")
	fs.Int64Var(&o.maxTokens, "max-tokens", 2048, "room of a judgement")
	fs.Float64Var(&o.samplingRate, "sampling-rate", 1, "fraction of the traces judged, chosen per trace (0 < rate <= 1)")
	fs.Var(list{&o.origins}, "origins", "mlx.origin values judged, comma-separated (* for any; a trace without one is a user's)")
	fs.Var(list{&o.models}, "models", "request models judged, comma-separated (default: any)")
	fs.IntVar(&o.minAnswer, "min-answer-length", 0, "answers shorter (characters) are not judged")
	fs.IntVar(&o.maxPerMinute, "max-per-minute", 30, "judgements in any minute at most (0: no cap); past it a trace is left, not queued")
	fs.StringVar(&o.metricsURL, "metrics-url", "", "the proxy's /metrics, for its in-flight count (default: the judge URL's host + /metrics)")
	fs.StringVar(&o.metricsToken, "metrics-token", "", "bearer token for the proxy's /metrics (default: $MLX_METRICS_TOKEN)")
	fs.Int64Var(&o.maxInFlight, "max-in-flight", 1, "stop a pass while the proxy serves this many requests or more (1: any user's; 0: never)")
	fs.Var(secondsOrDuration{&o.interval}, "interval", "time between passes, in seconds or as a duration")
	fs.IntVar(&o.limit, "limit", 20, "traces to scan per pass")
	fs.DurationVar(&o.timeout, "timeout", 120*time.Second, "bound on one judgement")
	fs.BoolVar(&o.once, "once", false, "run a single pass and exit")
	fs.BoolVar(&o.dryRun, "dry-run", false, "score but do not write")
	fs.BoolVar(&o.provision, "provision-dashboard", false, "create or replace the Opik dashboard \""+dashboardName+"\" and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["opik-api-key"] {
		o.apiKey = os.Getenv("OPIK_API_KEY")
	}
	if !given["judge-api-key"] {
		o.judgeKey = os.Getenv("JUDGE_API_KEY")
	}
	if !given["metrics-token"] {
		o.metricsToken = os.Getenv("MLX_METRICS_TOKEN")
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.limit < 1 || o.limit > 1000 {
		return nil, fmt.Errorf("--limit must be 1 to 1000, got %d", o.limit)
	}
	if o.interval <= 0 {
		return nil, fmt.Errorf("--interval must be positive")
	}
	if !(o.samplingRate > 0 && o.samplingRate <= 1) {
		return nil, fmt.Errorf("--sampling-rate must be more than 0 and at most 1, got %v", o.samplingRate)
	}
	if o.maxPerMinute < 0 || o.minAnswer < 0 || o.maxTokens < 16 {
		return nil, fmt.Errorf("--max-per-minute and --min-answer-length must be 0 or more, --max-tokens at least 16")
	}
	switch o.thinking {
	case "auto", "off", "unchanged":
	default:
		return nil, fmt.Errorf("--thinking must be auto, off or unchanged, got %q", o.thinking)
	}
	if o.metricsURL == "" {
		if u, err := url.Parse(o.judgeURL); err == nil && u.Host != "" {
			o.metricsURL = u.Scheme + "://" + u.Host + "/metrics"
		}
	}
	if o.provision && o.opikBase == "" {
		return nil, fmt.Errorf("--provision-dashboard needs --opik-base (or OPIK_BASE)")
	}
	return o, nil
}

// opikAPI is the API base under the original's --opik-base.
func (o *options) opikAPI() string {
	b := strings.TrimRight(o.opikBase, "/")
	if strings.HasSuffix(b, "/api") {
		return b
	}
	return b + "/api"
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintln(stderr, "mlxjudge:", err)
		return 2
	}
	var api *opikapi.Client
	if o.opikBase != "" {
		api = &opikapi.Client{Base: o.opikAPI(), APIKey: o.apiKey, Workspace: o.workspace, Project: o.project,
			HTTP: &http.Client{Timeout: 15 * time.Second}}
	}
	if o.provision {
		return provision(ctx, api, stdout, stderr)
	}
	client := judge.NewClient(o.judgeURL, o.model, o.judgeKey, o.timeout)
	client.ThinkingOff = o.thinking == "off" || o.thinking == "auto" && judge.LocalEndpoint(o.judgeURL)
	client.MaxTokens = o.maxTokens
	loop := &judge.Loop{
		Settings: judge.Settings{Limit: o.limit, Scores: judge.DefaultScores, Prompt: judge.DefaultPrompt,
			Project: o.project, DryRun: o.dryRun, MaxInFlight: o.maxInFlight, Remember: 100 * o.limit,
			Filter:     judge.Filter{Models: o.models, Origins: o.origins, MinAnswerChars: o.minAnswer},
			SampleRate: o.samplingRate, MaxPerMinute: o.maxPerMinute, Reason: judge.ReasonFor(o.model, o.judgeURL)},
		Judge: client,
	}
	if o.metricsURL != "" {
		loop.InFlight = judge.ScrapeInFlight(&http.Client{Timeout: 5 * time.Second}, o.metricsURL, o.metricsToken)
	}
	if api != nil {
		loop.Source, loop.Scores = judge.OpikSource{API: api}, api
	} else {
		loop.Source = judge.JaegerSource{Endpoint: o.jaegerURL, Service: o.service, Lookback: o.lookback,
			HTTP: &http.Client{Timeout: 15 * time.Second}}
	}
	for {
		p := loop.Run(ctx)
		printPass(stdout, &p, o.dryRun, api != nil)
		if o.once {
			if p.ReadErr != nil || p.WriteErr != nil {
				return 1
			}
			return 0
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(o.interval):
		}
	}
}

// printPass prints what the original printed, prefixed [mlxjudge].
func printPass(w io.Writer, p *judge.Pass, dryRun, opik bool) {
	if p.ReadErr != nil {
		fmt.Fprintf(w, "[mlxjudge] traces unreachable (%v)\n", p.ReadErr)
		return
	}
	left := p.Count(judge.ResultFiltered) + p.Count(judge.ResultSampledOut) + p.Count(judge.ResultRateLimited)
	pending := len(p.Judgements) - p.Count(judge.ResultSkipped) - left
	fmt.Fprintf(w, "[mlxjudge] %d traces, %d judged\n", len(p.Judgements), pending)
	if left > 0 {
		fmt.Fprintf(w, "[mlxjudge] left out: %d filtered, %d sampled out, %d past --max-per-minute\n",
			p.Count(judge.ResultFiltered), p.Count(judge.ResultSampledOut), p.Count(judge.ResultRateLimited))
	}
	for _, j := range p.Judgements {
		id := short(j.Candidate)
		switch j.Result {
		case judge.ResultScored:
			fmt.Fprintf(w, "[mlxjudge] scored %s -> %s\n", id, scoresJSON(j.Scores))
		case judge.ResultParseFailed:
			fmt.Fprintf(w, "[mlxjudge] unparseable judge reply for %s: %q\n", id, cut(j.Reply, 80))
		case judge.ResultJudgeError:
			fmt.Fprintf(w, "[mlxjudge] judge call failed for %s (%v)\n", id, j.Err)
		}
	}
	if p.BackedOff {
		fmt.Fprintln(w, "[mlxjudge] the proxy is busy: the rest waits for the next pass")
	}
	switch {
	case p.WriteErr != nil:
		fmt.Fprintf(w, "[mlxjudge] scores not written (%v)\n", p.WriteErr)
	case p.Written > 0:
		fmt.Fprintf(w, "[mlxjudge] wrote %d feedback scores\n", p.Written)
	case dryRun && p.Count(judge.ResultScored) > 0:
		fmt.Fprintln(w, "[mlxjudge] dry run: nothing written")
	case !opik && p.Count(judge.ResultScored) > 0:
		fmt.Fprintln(w, "[mlxjudge] no Opik: scores printed only")
	}
}

func short(c judge.Candidate) string {
	if c.OpikID != "" {
		return cut(c.OpikID, 12)
	}
	return fmt.Sprintf("%x", c.TraceID[:6])
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// scoresJSON is the scores rounded to 3 places, keys in the prompt's order.
func scoresJSON(s map[string]float64) string {
	var parts []string
	for _, k := range judge.DefaultScores {
		if v, ok := s[k]; ok {
			parts = append(parts, fmt.Sprintf("%q: %s", k, strconv.FormatFloat(float64(int(v*1000+0.5))/1000, 'f', -1, 64)))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
