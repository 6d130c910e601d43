package heuristics

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// README.md lists every entry of Default: changing rules.go without the
// documentation fails here.
func TestReadmeListsRules(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ") // lines rewrapped
	lists := map[string][]string{
		"stopword": Default.Stopwords, "refusal phrase": Default.RefusalPhrases, "hedge phrase": Default.HedgePhrases,
		"month": Default.Months, "not-a-name": Default.NotNames, "citation phrase": Default.CitationPhrases,
	}
	for kind, list := range lists {
		for _, p := range list {
			if !regexp.MustCompile(`[\s(]` + regexp.QuoteMeta(p) + `[,.;)\s]`).MatchString(doc) {
				t.Errorf("README.md does not list the %s %q", kind, p)
			}
		}
	}
	for _, s := range []string{"first 50 words", "fewer than **9**", "hedges × 100 / max(words, 100) / 5", "0.5 for each kind",
		"0.5 × repetition + 0.25 × refusal + 0.4 × hedging + 0.7 × ungrounded", "default 0.5"} {
		if !strings.Contains(doc, s) {
			t.Errorf("README.md lacks %q", s)
		}
	}
	d := Default
	if d.RefusalWindow != 50 || d.RepetitionMinWords != 9 || d.HedgeSaturation != 5 || d.HedgeMinWords != 100 || d.UngroundedPerKind != 0.5 ||
		d.WeightRepetition != 0.5 || d.WeightRefusal != 0.25 || d.WeightHedging != 0.4 || d.WeightUngrounded != 0.7 || d.FlagThreshold != 0.5 {
		t.Error("a number in rules.go changed: update README.md and this test")
	}
}
