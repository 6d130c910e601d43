package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteLevels prints the levels as the table a run ends with: the
// figures of each level on one line. Open-loop levels add what was sent.
func WriteLevels(w io.Writer, levels []Level) {
	rate := false
	for _, l := range levels {
		rate = rate || l.Mode == "rate"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "level\treq\terrors\tttft p50\tp90\tp95\tp99\titl p50\tp99\te2e p50\tp90\tp95\tp99\ttok/s p50\tp99\treq/s\tout tok/s\t"
	if rate {
		head += "sent/s\tlate\tservice p99\t"
	}
	fmt.Fprintln(tw, head)
	for _, l := range levels {
		s := l.Summary
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.1f\t",
			l.Name, s.Requests, ErrorText(s.Errors),
			FormatMs(nz(s.TTFT, s.TTFT.P50)), FormatMs(nz(s.TTFT, s.TTFT.P90)), FormatMs(nz(s.TTFT, s.TTFT.P95)), FormatMs(nz(s.TTFT, s.TTFT.P99)),
			FormatMs(nz(s.ITL, s.ITL.P50)), FormatMs(nz(s.ITL, s.ITL.P99)),
			FormatMs(nz(s.E2E, s.E2E.P50)), FormatMs(nz(s.E2E, s.E2E.P90)), FormatMs(nz(s.E2E, s.E2E.P95)), FormatMs(nz(s.E2E, s.E2E.P99)),
			rateText(s.TPS, s.TPS.P50), rateText(s.TPS, s.TPS.P99), s.ReqPerS, s.OutTokPerS)
		if rate {
			if l.Mode == "rate" && s.ServiceE2E != nil {
				fmt.Fprintf(tw, "%.2f\t%d\t%s\t", s.SendRate, s.Late, FormatMs(nz(*s.ServiceE2E, s.ServiceE2E.P99)))
			} else {
				fmt.Fprint(tw, "\t\t\t")
			}
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
}

// WriteProfile prints a profile run: one line per cell, bench.py's
// columns (TTFT, generation time, tok/s) plus the token counts.
func WriteProfile(w io.Writer, levels []Level) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "prompt\tstream\tn\terrors\tttft p50\tttft p99\tgen p50\tgen p99\ttok/s p50\ttok/s p99\tprompt tok\toutput tok\t")
	for _, l := range levels {
		s := l.Summary
		stream := "off"
		if l.Stream {
			stream = "on"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f\t\n",
			l.Prompt, stream, s.Requests, ErrorText(s.Errors),
			FormatMs(nz(s.TTFT, s.TTFT.P50)), FormatMs(nz(s.TTFT, s.TTFT.P99)),
			FormatMs(nz(s.Generation, s.Generation.P50)), FormatMs(nz(s.Generation, s.Generation.P99)),
			rateText(s.TPS, s.TPS.P50), rateText(s.TPS, s.TPS.P99), s.PromptTokens.Mean, s.OutputTokens.Mean)
	}
	_ = tw.Flush()
}

// nz is v, or NaN ("-") when the distribution is empty.
func nz(p Pcts, v float64) float64 {
	if p.N == 0 {
		return nan
	}
	return v
}

var nan = func() float64 { var z float64; return z / z }()

func rateText(p Pcts, v float64) string {
	if p.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// ErrorText is "cause n, cause n" in cause order, "-" for none.
func ErrorText(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// WriteScenarios prints an agentic run: bench_agentic.py's columns per
// scenario.
func WriteScenarios(w io.Writer, scenarios []ScenarioSummary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tloops\tcompleted\tright\tturns\ttool calls\tvalid\tturn-1 ttft p50\tlast-turn ttft p50\twall p50\terrors\t")
	for _, s := range scenarios {
		right := "-"
		if s.Checkable > 0 {
			right = fmt.Sprintf("%d/%d", s.Correct, s.Checkable)
		}
		first, last := nan, nan
		if len(s.TurnTTFT) > 0 {
			first = nz(s.TurnTTFT[0], s.TurnTTFT[0].P50)
			l := s.TurnTTFT[len(s.TurnTTFT)-1]
			last = nz(l, l.P50)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d/%d\t%s\t%.1f\t%.1f\t%.0f%%\t%s\t%s\t%s\t%s\t\n",
			s.Scenario, s.Loops, s.Completed, s.Loops, right, s.Turns.Mean, s.ToolCalls.Mean, 100*s.ValidityRate,
			FormatMs(first), FormatMs(last), FormatMs(nz(s.Wall, s.Wall.P50)), ErrorText(s.Errors))
	}
	_ = tw.Flush()
}
