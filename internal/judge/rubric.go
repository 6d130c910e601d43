package judge

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Rubric is one score the judge gives: its name (the Opik feedback score,
// the `name` label of mlx_judge_score) and what it measures, as the prompt
// tells the judge. Opik's online evaluation rules define their scores the
// same way (a name and a description each).
type Rubric struct {
	Name        string `mapstructure:"name"`
	Description string `mapstructure:"description"`
}

// DefaultRubrics are the original's three (opik_evaluator.py's
// JUDGE_PROMPT), with its wording.
var DefaultRubrics = []Rubric{
	{Name: "correctness", Description: "how factually correct and complete the answer is"},
	{Name: "helpfulness", Description: "how well the answer addresses the request"},
	{Name: "hallucination_free", Description: "1.0 if the answer is fully grounded in the question and invents nothing, 0.0 if it fabricates"},
}

// MaxRubrics bounds the rubrics: each is a label value of mlx_judge_score
// and a key the judge must write.
const MaxRubrics = 10

// rubricName is what a rubric may be called: a word that is a label value,
// an Opik score name and a JSON key without escaping.
var rubricName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// Names are the rubrics' names, in order.
func Names(rubrics []Rubric) []string {
	out := make([]string, len(rubrics))
	for i, r := range rubrics {
		out[i] = r.Name
	}
	return out
}

// CheckRubrics says what is wrong with a list of rubrics.
func CheckRubrics(rubrics []Rubric) error {
	var errs []error
	switch {
	case len(rubrics) == 0:
		errs = append(errs, errors.New("rubrics: name at least one"))
	case len(rubrics) > MaxRubrics:
		errs = append(errs, fmt.Errorf("rubrics: at most %d, got %d", MaxRubrics, len(rubrics)))
	}
	seen := map[string]bool{}
	for i, r := range rubrics {
		switch {
		case !rubricName.MatchString(r.Name):
			errs = append(errs, fmt.Errorf("rubrics[%d].name: %q is not a name (letters, digits, _ . -; at most 64)", i, r.Name))
		case seen[r.Name]:
			errs = append(errs, fmt.Errorf("rubrics[%d].name: %q is named twice", i, r.Name))
		}
		seen[r.Name] = true
	}
	return errors.Join(errs...)
}

// countWords spell the number of scores, as the original's prompt did
// ("using three numbers").
var countWords = []string{"", "one number", "two numbers", "three numbers", "four numbers", "five numbers",
	"six numbers", "seven numbers", "eight numbers", "nine numbers", "ten numbers"}

// exampleValues are the example's values, in turn: the original's.
var exampleValues = []string{"0.9", "0.8", "1.0"}

// BuildPrompt is the judge prompt for rubrics: DefaultPrompt's text with
// one line per rubric (its name, quoted, and its description) and an
// example reply with every name. For DefaultRubrics it is DefaultPrompt.
// Braces in a description are literal (doubled for Render).
func BuildPrompt(rubrics []Rubric) string {
	count := fmt.Sprintf("%d numbers", len(rubrics))
	if len(rubrics) < len(countWords) {
		count = countWords[len(rubrics)]
	}
	var b strings.Builder
	b.WriteString("You are an evaluator. Score the assistant's answer to the user's question using " + count + " between 0 and 1.\n\n")
	b.WriteString(dataNotice)
	b.WriteString("Question:\n{question}\n\nAssistant answer:\n{answer}\n\nReturn ONLY a JSON object with exactly these keys:\n")
	var example []string
	for i, r := range rubrics {
		fmt.Fprintf(&b, "- %q", r.Name)
		if d := strings.TrimSpace(r.Description); d != "" {
			b.WriteString(": " + braces.Replace(d))
		}
		b.WriteByte('\n')
		example = append(example, fmt.Sprintf("%q: %s", r.Name, exampleValues[i%len(exampleValues)]))
	}
	b.WriteString("Example: {{" + strings.Join(example, ", ") + "}}")
	return b.String()
}

// braces doubles braces, so that Render writes them as they are.
var braces = strings.NewReplacer("{", "{{", "}", "}}")
