package heuristics

// The Default rules as functions, for the tests: the proxy compiles its
// own Checker (scorer.go).

var defaultChecker = Compile(Default)

// Evaluate applies the Default rules.
func Evaluate(in Input) Result { return defaultChecker.Evaluate(in) }

// Repetition, Refusal, Hedging and Ungrounded apply one Default rule.
func Repetition(text string) float64 {
	var sc scratch
	return defaultChecker.repetition(sc.words(prose(text)), &sc)
}
func Refusal(text string) float64 { return defaultChecker.refusal1(words(prose(text))) }
func Hedging(text string) float64 { return defaultChecker.hedging(words(prose(text))) }
func Ungrounded(in Input) float64 {
	p := prose(in.Text)
	return defaultChecker.ungrounded(in, p, words(p))
}
