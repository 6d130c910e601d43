package heuristics

// Every word list, threshold and weight of the heuristics, as plain data.
// Phrases are matched on whole words, case-insensitively, with apostrophes
// removed (so "can't", "can’t" and "cant" are all "cant"). README.md says
// how each rule uses its fields.

// Rules configures the heuristics. Change Default, or build a Checker from
// a modified copy with Compile.
type Rules struct {
	// Repetition: trigrams of the words left after dropping Stopwords;
	// answers with fewer than RepetitionMinWords such words score 0.
	Stopwords          []string
	RepetitionMinWords int

	// Refusal: 1 when one of RefusalPhrases starts within the first
	// RefusalWindow words of the answer.
	RefusalPhrases []string
	RefusalWindow  int

	// Hedging: occurrences of HedgePhrases per word, normalised so that
	// HedgeSaturation hedges per 100 words give 1; answers shorter than
	// HedgeMinWords count as HedgeMinWords long.
	HedgePhrases    []string
	HedgeSaturation float64
	HedgeMinWords   int

	// Ungrounded: with tools offered, none called and no tool results in
	// the conversation, UngroundedPerKind for each kind of factual-looking
	// content found: numbers, dates (Months, years), proper names
	// (capitalised words inside a sentence, except NotNames), citations
	// (CitationPhrases, "[1]"-style references).
	Months            []string
	NotNames          []string
	CitationPhrases   []string
	UngroundedPerKind float64

	// Composite risk: min(1, Σ weight × rule), flagged when strictly above
	// FlagThreshold.
	WeightRepetition, WeightRefusal, WeightHedging, WeightUngrounded float64
	FlagThreshold                                                    float64
}

// Default is the rule set the proxy uses. Word lists and weights extend
// the original mlx-oc proxy's (its stopwords, refusal and hedge phrases,
// and its weights 0.5, 0.25, 0.4, 0.7 with flag threshold 0.5).
var Default = Rules{
	Stopwords: []string{
		"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "in", "is", "it", "its",
		"of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with", "you", "i", "he", "she", "they", "we",
	},
	RepetitionMinWords: 9,

	RefusalPhrases: []string{
		// the original's
		"i cant", "i cannot", "i do not know", "i dont know", "i am not able", "i am unable",
		"i dont have access", "i couldnt find", "no information", "not possible for me to",
		// the same said otherwise
		"i can not", "im not able", "im unable", "i do not have access", "i could not find",
		"i wont be able", "i will not be able", "im not allowed", "i am not allowed",
		"i must decline", "as an ai",
	},
	RefusalWindow: 50,

	HedgePhrases: []string{
		// the original's
		"maybe", "perhaps", "i think", "i believe", "probably", "roughly", "approximately",
		"i guess", "it seems", "likely", "possibly",
		// more of the same kind
		"i suppose", "not sure", "not certain", "it appears", "presumably", "apparently",
		"supposedly", "arguably", "seemingly", "as far as i know", "to my knowledge", "if i recall",
	},
	HedgeSaturation: 5,
	HedgeMinWords:   100,

	Months: []string{
		"january", "february", "march", "april", "may", "june", "july", "august",
		"september", "october", "november", "december",
	},
	NotNames: []string{
		"i", "im", "ive", "ill", "id", "ok", "okay", "yes", "no",
	},
	CitationPhrases: []string{
		"according to", "et al", "source", "sources", "cited", "citation", "reference", "references",
		"doi", "isbn", "arxiv", "http", "https", "www",
	},
	UngroundedPerKind: 0.5,

	WeightRepetition: 0.5,
	WeightRefusal:    0.25, // a refusal is the opposite of a hallucination
	WeightHedging:    0.4,
	WeightUngrounded: 0.7,
	FlagThreshold:    0.5,
}
