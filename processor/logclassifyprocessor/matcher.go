package logclassifyprocessor

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// matcher decides one rule's pattern. The table is written as plain regular
// expressions, but most of their alternatives are a literal at the start of
// the message (`^Starting httpd at `) or anywhere in it (`[ring]`), and Go's
// regexp cannot skip ahead on an alternation. So each top-level alternative
// is compiled on its own: a pure literal becomes strings.HasPrefix or
// strings.Contains, anything else a regular expression guarded by a literal
// it needs. Same answers as the whole pattern, several times faster.
type matcher []alternative

type alternative struct {
	prefix   string         // the message must start with this ("" for none)
	contains string         // the message must contain this ("" for none)
	re       *regexp.Regexp // then, if set, must match
}

func newMatcher(pattern string) matcher {
	regexp.MustCompile(pattern) // a bad table entry fails at start-up, with the pattern in the panic
	flags, body := leadingFlags(pattern)
	var m matcher
	for _, alt := range splitAlternatives(body) {
		m = append(m, newAlternative(flags+alt))
	}
	return m
}

func (m matcher) match(message string) bool {
	for _, a := range m {
		if a.prefix != "" && !strings.HasPrefix(message, a.prefix) {
			continue
		}
		if a.contains != "" && !strings.Contains(message, a.contains) {
			continue
		}
		if a.re == nil || a.re.MatchString(message) {
			return true
		}
	}
	return false
}

func newAlternative(pattern string) alternative {
	re := regexp.MustCompile(pattern)
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return alternative{re: re}
	}
	parsed = parsed.Simplify()
	subs := []*syntax.Regexp{parsed}
	if parsed.Op == syntax.OpConcat {
		subs = parsed.Sub
	}
	anchored := len(subs) > 0 && subs[0].Op == syntax.OpBeginText
	if anchored {
		subs = subs[1:]
	}
	switch {
	case len(subs) == 1 && isLiteral(subs[0]) && anchored:
		return alternative{prefix: string(subs[0].Rune)}
	case len(subs) == 1 && isLiteral(subs[0]):
		return alternative{contains: string(subs[0].Rune)}
	case len(subs) > 0 && isLiteral(subs[0]) && anchored:
		return alternative{prefix: string(subs[0].Rune), re: re}
	}
	a := alternative{re: re}
	for _, s := range subs {
		if isLiteral(s) && len(s.Rune) > len(a.contains) {
			a.contains = string(s.Rune)
		}
	}
	return a
}

func isLiteral(re *syntax.Regexp) bool {
	return re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0
}

// leadingFlags splits `(?i)rest` into `(?i)` and `rest`: flags at the start
// apply to every alternative.
func leadingFlags(pattern string) (flags, rest string) {
	if strings.HasPrefix(pattern, "(?") {
		if end := strings.IndexByte(pattern, ')'); end > 0 && !strings.ContainsAny(pattern[2:end], ":(") {
			return pattern[:end+1], pattern[end+1:]
		}
	}
	return "", pattern
}

// splitAlternatives splits a pattern at its top-level `|`s (not inside a
// group or a character class, not escaped).
func splitAlternatives(pattern string) []string {
	var out []string
	depth, start, inClass := 0, 0, false
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if i+1 < len(pattern) && pattern[i+1] == ']' {
				i++ // `[]...]`: the first ] is a literal
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			out = append(out, pattern[start:i])
			start = i + 1
		}
	}
	return append(out, pattern[start:])
}
