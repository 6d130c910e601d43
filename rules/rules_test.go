// Package rules holds the vmalert / Prometheus rule files (*.yml) and their
// promtool unit tests (tests/*_test.yml). This Go test checks what promtool
// does not: the names and groups of the original alerts, labels and
// annotations, that every metric read is a known series, and that every
// alert has a promtool case where it fires and one where it stays silent.
// promtool and vmalert themselves run from rules/rules.mk (and here, when
// they are installed).
package rules

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mlx-otelcol/mlx-otelcol/testutil/promqlnames"
)

// The original stack's alerts, by group: names, groups and thresholds are
// its interface (mlx-oc observability/vmalert/rules.yml and the reference).
var originalAlerts = map[string][]string{
	"mlx-hardware": {
		"MLXGPUHighUtilization", "MLXGPUMemoryPressure", "MLXHighPackagePower", "MLXPowerSpike",
		"MLXThermalThrottling", "MLXCriticalThermalPressure", "MLXMemoryPressureHigh", "MLXLoadHigh",
		"MLXDiskNearlyFull", "MLXHardwareExporterDown", "MLXProxyDown", "MLXUpstreamDown",
		"MLXVictoriaMetricsDown", "MLXVmalertDown", "MLXAlertmanagerDown",
	},
	"mlx-serving": {
		"MLXServerDown", "MLXModelNotLoaded", "MLXServerCrashLoop", "MLXServerRepeatedCrashes",
		"MLXServerReadyProbeFailing", "MLXServerMetalFault", "MLXLogTailerDown", "MLXLogTailerNotSending",
	},
	"mlx-inference": {
		"MLXHighErrorRate", "MLXErrorSpike", "MLXHighTTFTP95", "MLXSlowGenerationP95",
		"MLXInferenceStalled", "MLXInFlightBacklog", "MLXThroughputDrop",
	},
	"mlx-quality": {
		"MLXHallucinationRiskElevated", "MLXHallucinationRiskCritical", "MLXHighRepetition",
		"MLXHighRefusalRate", "MLXHighHedging", "MLXHighUngrounded",
	},
	"mlx-confidence": {
		"MLXLowTokenConfidence", "MLXHighPerplexity", "MLXHighTokenEntropy", "MLXConfidenceCollapse",
		"MLXConfidenceScoringStopped",
	},
	"mlx-slo": {
		"MLXSLOAvailabilityFastBurn", "MLXSLOAvailabilitySlowBurn", "MLXSLOLatencyFastBurn", "MLXSLOLatencySlowBurn",
		"MLXErrorBudgetExhausted",
	},
}

// Added here, where the original had nothing.
var addedAlerts = map[string][]string{
	"mlx-quality": {"MLXResponsesTruncated"},
	"mlx-serving": {"MLXModelLoadFailed", "MLXServerPythonError"},
	"mlx-collector": {
		"MLXCollectorExporterSendFailures", "MLXCollectorExporterQueueNearFull",
		"MLXCollectorExporterDroppingData", "MLXCollectorReceiverErrors", "MLXCollectorTargetDown",
		"MLXProxyTelemetryDropped", "MLXOpikScoresUnseen",
	},
	"mlx-judge": {"MLXJudgeCorrectnessLow", "MLXJudgeFailing", "MLXJudgeCannotReadTraces"},
	"mlx-failures": {
		"MLXProxyAtCapacity", "MLXProxyRefusingCallers", "MLXProxyConnectionsRefused", "MLXStreamsStalling",
		"MLXProxyPanics", "MLXSupervisorPanics", "MLXServerLogWriteErrors", "MLXProxyBufferCuts",
		"MLXHardwareSourceDown", "MLXSwapInUse", "MLXMemoryPressureCritical", "MLXKVCacheAtLimit",
		"MLXPromptNearContextWindow", "MLXRingLinkDown",
	},
	"mlx-fleet": {
		"MLXAgentSilent", "MLXNodeSilent", "MLXFleetSilent", "MLXHeartbeatDown", "MLXAgentCrashLoop",
		"MLXFleetVersionSkew",
	},
	"mlx-routing": {"MLXUpstreamOut", "MLXModelNoUpstream", "MLXSpillOverHot"},
}

// The original's evaluation intervals.
var groupIntervals = map[string]string{
	"mlx-hardware": "30s", "mlx-serving": "15s", "mlx-inference": "15s", "mlx-quality": "30s",
	"mlx-confidence": "30s", "mlx-slo": "30s", "mlx-slo-recording": "30s", "mlx-collector": "30s",
	"mlx-judge": "30s", "mlx-failures": "30s", "mlx-fleet-status": "30s", "mlx-fleet": "30s", "mlx-routing": "30s",
}

// Alerts that read a last-request gauge must be gated on traffic: they also
// read one of these counters.
var trafficGated = map[string]string{
	"mlx-quality":    "mlx_requests_total|mlx_finish_reason_total",
	"mlx-confidence": "mlx_confidence_scored_total",
	"mlx-judge":      "mlx_requests_total",
}

func loadRules(t *testing.T) []promqlnames.Rule {
	t.Helper()
	rules, err := promqlnames.LoadRules("*.yml")
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

func TestOriginalAlertsKeptInTheirGroups(t *testing.T) {
	rules := loadRules(t)
	got := map[string]string{} // alert -> group
	for _, r := range rules {
		if r.Alert == "" {
			continue
		}
		if g, dup := got[r.Alert]; dup {
			t.Errorf("alert %s defined twice (groups %s and %s)", r.Alert, g, r.Group)
		}
		got[r.Alert] = r.Group
	}
	want := map[string]string{}
	n := 0
	for _, m := range []map[string][]string{originalAlerts, addedAlerts} {
		for g, names := range m {
			for _, a := range names {
				want[a] = g
				n++
			}
		}
	}
	orig := 0
	for _, names := range originalAlerts {
		orig += len(names)
	}
	if orig != 46 {
		t.Fatalf("the original had 46 alerts, the table here lists %d", orig)
	}
	for a, g := range want {
		if got[a] != g {
			t.Errorf("alert %s: in group %q, want %q", a, got[a], g)
		}
	}
	for a, g := range got {
		if _, ok := want[a]; !ok {
			t.Errorf("alert %s (group %s) is in no table of this test: add it to addedAlerts", a, g)
		}
	}
	if len(got) != n {
		t.Errorf("%d alerts, want %d", len(got), n)
	}
	for _, r := range rules {
		if want, ok := groupIntervals[r.Group]; !ok {
			t.Errorf("group %s: unknown, add its interval to groupIntervals", r.Group)
		} else if r.Interval != want {
			t.Errorf("group %s: interval %q, want %q", r.Group, r.Interval, want)
		}
	}
}

func TestRuleLabelsAndAnnotations(t *testing.T) {
	for _, r := range loadRules(t) {
		if r.Record != "" {
			if r.For != "" || len(r.Annotations) > 0 {
				t.Errorf("recording rule %s: for/annotations make no sense", r.Record)
			}
			if !regexp.MustCompile(`^[a-z_]+:[a-z_]+:[a-z0-9_]+$`).MatchString(r.Record) {
				t.Errorf("recording rule %s: name is not level:metric:operations", r.Record)
			}
			continue
		}
		switch r.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, r.Labels["severity"])
		}
		if r.Labels["team"] != "ml-platform" {
			t.Errorf("%s: team %q, want ml-platform", r.Alert, r.Labels["team"])
		}
		if r.Labels["category"] == "" {
			t.Errorf("%s: no category label", r.Alert)
		}
		for _, k := range []string{"summary", "description"} {
			if strings.TrimSpace(r.Annotations[k]) == "" {
				t.Errorf("%s: no %s annotation", r.Alert, k)
			}
		}
		if r.For == "" {
			t.Errorf("%s: no `for`: a single evaluation would page", r.Alert)
		}
	}
}

func TestRuleExpressionsReadKnownSeries(t *testing.T) {
	rules := loadRules(t)
	known, err := promqlnames.KnownNames("..", promqlnames.RecordedNames(rules)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		names, err := promqlnames.Names(r.Expr)
		if err != nil {
			t.Errorf("%s: %v", r.Name(), err)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s: reads no series", r.Name())
		}
		for _, n := range names {
			if !known[n] {
				t.Errorf("%s reads %s, which no component documents and the original did not have", r.Name(), n)
			}
		}
		if re, ok := trafficGated[r.Group]; ok && r.Alert != "" && !regexp.MustCompile(re).MatchString(r.Expr) {
			t.Errorf("%s: a %s alert must be gated on traffic (%s)", r.Alert, r.Group, re)
		}
	}
}

type promtoolTests struct {
	RuleFiles          []string `yaml:"rule_files"`
	EvaluationInterval string   `yaml:"evaluation_interval"`
	Tests              []struct {
		Name        string `yaml:"name"`
		Interval    string `yaml:"interval"`
		InputSeries []struct {
			Series string `yaml:"series"`
			Values string `yaml:"values"`
		} `yaml:"input_series"`
		AlertRuleTest []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `yaml:"exp_labels"`
				ExpAnnotations map[string]string `yaml:"exp_annotations"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
		PromqlExprTest []struct {
			Expr       string `yaml:"expr"`
			EvalTime   string `yaml:"eval_time"`
			ExpSamples []struct {
				Labels string  `yaml:"labels"`
				Value  float64 `yaml:"value"`
			} `yaml:"exp_samples"`
		} `yaml:"promql_expr_test"`
	} `yaml:"tests"`
}

// Every alert fires in some promtool case and is expected silent in another;
// every recording rule is checked by value; every rule file is tested with
// its groups' interval; every input series is a known series (a misspelled
// one would make a silent case pass for nothing).
func TestEveryRuleHasFiringAndSilentPromtoolCases(t *testing.T) {
	rules := loadRules(t)
	known, err := promqlnames.KnownNames("..", promqlnames.RecordedNames(rules)...)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("tests/*_test.yml")
	if len(files) == 0 {
		t.Fatal("no promtool test file in tests/")
	}
	fires := map[string]int{}
	silent := map[string]int{}
	checked := map[string]int{}
	testedFiles := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var pt promtoolTests
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&pt); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		intervals := map[string]bool{}
		for _, rf := range pt.RuleFiles {
			p := filepath.Clean(filepath.Join(filepath.Dir(f), rf))
			testedFiles[p] = true
			for _, r := range rules {
				if filepath.Clean(r.File) == p {
					intervals[r.Interval] = true
				}
			}
		}
		for iv := range intervals {
			if iv != pt.EvaluationInterval {
				t.Errorf("%s: evaluation_interval %s, but its rules are evaluated every %s", f, pt.EvaluationInterval, iv)
			}
		}
		for _, tc := range pt.Tests {
			for _, s := range tc.InputSeries {
				names, err := promqlnames.Names(s.Series)
				if err != nil {
					t.Errorf("%s / %s: input series %s: %v", f, tc.Name, s.Series, err)
				}
				for _, n := range names {
					if !known[n] {
						t.Errorf("%s / %s: input series %s is not a known series", f, tc.Name, n)
					}
				}
			}
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname]++
				} else {
					silent[a.Alertname]++
				}
				for _, e := range a.ExpAlerts {
					if e.ExpAnnotations["summary"] == "" || e.ExpAnnotations["description"] == "" {
						t.Errorf("%s / %s / %s: expected alert without its summary and description", f, tc.Name, a.Alertname)
					}
				}
			}
			for _, p := range tc.PromqlExprTest {
				names, _ := promqlnames.Names(p.Expr)
				for _, n := range names {
					checked[n]++
				}
			}
		}
	}
	var missing []string
	for _, r := range rules {
		if !testedFiles[filepath.Clean(r.File)] {
			missing = append(missing, r.File+": no promtool test file loads it")
		}
		switch {
		case r.Alert != "" && fires[r.Alert] == 0:
			missing = append(missing, r.Alert+": no case where it fires")
		case r.Alert != "" && silent[r.Alert] == 0:
			missing = append(missing, r.Alert+": no case where it stays silent")
		case r.Record != "" && checked[r.Record] == 0:
			missing = append(missing, r.Record+": no promql_expr_test reads it")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error(m)
	}
	for a := range fires {
		if !hasAlert(rules, a) {
			t.Errorf("promtool tests name alert %s, which no rule defines", a)
		}
	}
}

func hasAlert(rules []promqlnames.Rule, name string) bool {
	for _, r := range rules {
		if r.Alert == name {
			return true
		}
	}
	return false
}

// When promtool and vmalert are on PATH (make unit puts bin/ first, where
// make stores builds them), run them too; rules/rules.mk always does.
func TestPromtoolAndVmalertAcceptTheRules(t *testing.T) {
	files, _ := filepath.Glob("*.yml")
	tests, _ := filepath.Glob("tests/*_test.yml")
	if p, err := exec.LookPath("promtool"); err != nil {
		t.Log("promtool not on PATH: skipped (make stores builds it into bin/)")
	} else {
		run(t, p, append([]string{"check", "rules"}, files...)...)
		run(t, p, append([]string{"test", "rules"}, tests...)...)
	}
	if p, err := exec.LookPath("vmalert"); err != nil {
		t.Log("vmalert not on PATH: skipped (make stores builds it into bin/)")
	} else {
		run(t, p, "-dryRun", "-loggerLevel=ERROR", "-rule=*.yml")
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

// The README lists the original's alerts as this test's table does.
func TestReadmeListsTheOriginalAlerts(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (mlx-[a-z]+) \((\d+)\) \| (.+) \|$`)
	got := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		got[m[1]] = strings.Split(m[3], ", ")
	}
	if !reflect.DeepEqual(got, originalAlerts) {
		t.Errorf("README.md lists %v, want %v", got, originalAlerts)
	}
}

// The original's severity and `for` of each of its 46 alerts (mlx-oc
// observability/vmalert/rules.yml): they decide who is paged and how soon,
// so they are its interface too. A change must be argued in the rule's
// comment and listed in changedSeverityOrFor with the reason.
var originalSeverityAndFor = map[string][2]string{
	"MLXGPUHighUtilization":        {"warning", "5m"},
	"MLXGPUMemoryPressure":         {"critical", "2m"},
	"MLXHighPackagePower":          {"warning", "5m"},
	"MLXPowerSpike":                {"info", "1m"},
	"MLXThermalThrottling":         {"warning", "5m"},
	"MLXCriticalThermalPressure":   {"critical", "3m"},
	"MLXMemoryPressureHigh":        {"warning", "10m"},
	"MLXLoadHigh":                  {"warning", "10m"},
	"MLXDiskNearlyFull":            {"warning", "5m"},
	"MLXHardwareExporterDown":      {"critical", "2m"},
	"MLXProxyDown":                 {"critical", "2m"},
	"MLXUpstreamDown":              {"critical", "1m"},
	"MLXVictoriaMetricsDown":       {"critical", "2m"},
	"MLXVmalertDown":               {"critical", "2m"},
	"MLXAlertmanagerDown":          {"warning", "2m"},
	"MLXServerDown":                {"critical", "1m"},
	"MLXModelNotLoaded":            {"warning", "2m"},
	"MLXServerCrashLoop":           {"critical", "2m"},
	"MLXServerRepeatedCrashes":     {"critical", "2m"},
	"MLXServerReadyProbeFailing":   {"warning", "5m"},
	"MLXServerMetalFault":          {"critical", "1m"},
	"MLXLogTailerDown":             {"warning", "2m"},
	"MLXLogTailerNotSending":       {"warning", "5m"},
	"MLXHighErrorRate":             {"warning", "5m"},
	"MLXErrorSpike":                {"warning", "10m"},
	"MLXHighTTFTP95":               {"warning", "5m"},
	"MLXSlowGenerationP95":         {"warning", "5m"},
	"MLXInferenceStalled":          {"critical", "2m"},
	"MLXInFlightBacklog":           {"warning", "2m"},
	"MLXThroughputDrop":            {"warning", "15m"},
	"MLXHallucinationRiskElevated": {"warning", "5m"},
	"MLXHallucinationRiskCritical": {"critical", "2m"},
	"MLXHighRepetition":            {"warning", "5m"},
	"MLXHighRefusalRate":           {"info", "10m"},
	"MLXHighHedging":               {"warning", "10m"},
	"MLXHighUngrounded":            {"warning", "10m"},
	"MLXLowTokenConfidence":        {"warning", "10m"},
	"MLXHighPerplexity":            {"warning", "10m"},
	"MLXHighTokenEntropy":          {"warning", "10m"},
	"MLXConfidenceCollapse":        {"critical", "10m"},
	"MLXConfidenceScoringStopped":  {"info", "30m"},
	"MLXSLOAvailabilityFastBurn":   {"critical", "5m"},
	"MLXSLOAvailabilitySlowBurn":   {"warning", "15m"},
	"MLXSLOLatencyFastBurn":        {"critical", "5m"},
	"MLXSLOLatencySlowBurn":        {"warning", "15m"},
	"MLXErrorBudgetExhausted":      {"critical", "5m"},
}

// changedSeverityOrFor: none; every original alert pages as it did.
var changedSeverityOrFor = map[string]string{}

func TestOriginalSeveritiesAndDurations(t *testing.T) {
	if len(originalSeverityAndFor) != 46 {
		t.Fatalf("the table lists %d alerts, the original had 46", len(originalSeverityAndFor))
	}
	for _, r := range loadRules(t) {
		want, ok := originalSeverityAndFor[r.Alert]
		if !ok || changedSeverityOrFor[r.Alert] != "" {
			continue
		}
		if got := [2]string{r.Labels["severity"], r.For}; got != want {
			t.Errorf("%s: severity %s for %s, the original's %s for %s", r.Alert, got[0], got[1], want[0], want[1])
		}
	}
}

// Rules on users' traffic keep the series recorded before the proxy added
// the origin label: they select origin=~"user|" (the empty alternative is
// the label's absence), never origin="user".
func TestUserSelectorsKeepPreOriginSeries(t *testing.T) {
	userOnly := regexp.MustCompile(`origin\s*=\s*"user"`)
	for _, r := range loadRules(t) {
		if userOnly.MatchString(r.Expr) {
			t.Errorf(`%s (%s): selects origin="user", which misses series recorded before the origin label; select origin=~"user|"`, r.Name(), r.File)
		}
	}
}
