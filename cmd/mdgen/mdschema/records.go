package mdschema

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The keys of the spans and log records a component emits. mdatagen
// describes metrics and log events; it has no section for a span's or a
// record's attribute keys, so these are this repository's, named plainly:
//
//	span_attributes:            # the spans' keys
//	  <key>: {type, set, content, description}
//	log_attributes:             # the log records' keys, by kind of record
//	  <kind>:
//	    <key>: {type, set, content, description}
//	resource_attributes:        # mdatagen's name; set says which records
//	  <key>: {type, set, description}
//	span_events:                # the spans' events, by name
//	  <name>: {description}
//
// A key may hold placeholders, whole segments between dots such as
// llm.input_messages.<i>.message.role: each stands for an index (digits).

// RecordAttribute is one attribute key of a span, a log record or their
// resource.
type RecordAttribute struct {
	// Type is the value's type: string, int, double, bool or slice.
	Type string `yaml:"type"`
	// ElementType is a slice's element type: string, int, double or bool.
	ElementType string `yaml:"element_type"`
	// Set says when the key is set: "always" (every record has it) or a
	// condition in words. It may be empty for content.
	Set string `yaml:"set"`
	// Content marks the request's and the answer's text (prompts,
	// messages, tools): the keys a component that captures no content
	// leaves out.
	Content     bool   `yaml:"content"`
	Description string `yaml:"description"`
}

// Always is the value of Set for a key every record has.
const Always = "always"

// Always reports whether every record has the key.
func (a RecordAttribute) Always() bool { return a.Set == Always }

// TypeName is the type as documentation.md shows it: string, int, double,
// bool, or the element type and [] for a slice (string[]).
func (a RecordAttribute) TypeName() string {
	if a.Type == "slice" {
		return a.ElementType + "[]"
	}
	return a.Type
}

// SetText is the documented "set" column: "content" first for content,
// then the condition.
func (a RecordAttribute) SetText() string {
	switch {
	case !a.Content:
		return a.Set
	case a.Set == "":
		return "content"
	}
	return "content, " + a.Set
}

// RecordAttributes is a table of attribute keys, in the order of
// metadata.yaml.
type RecordAttributes []Entry[RecordAttribute]

// UnmarshalYAML implements yaml.Unmarshaler, as Ordered does.
func (r *RecordAttributes) UnmarshalYAML(n *yaml.Node) error {
	return (*Ordered[RecordAttribute])(r).UnmarshalYAML(n)
}

// Lookup returns the entry whose key (with its placeholders) matches key.
// check makes sure at most one can.
func (r RecordAttributes) Lookup(key string) (Entry[RecordAttribute], bool) {
	for _, e := range r {
		if MatchKey(e.Key, key) {
			return e, true
		}
	}
	return Entry[RecordAttribute]{}, false
}

// Keys returns the keys in order.
func (r RecordAttributes) Keys() []string { return Ordered[RecordAttribute](r).Keys() }

// SpanEvent is an event the component adds to its spans.
type SpanEvent struct {
	Description string `yaml:"description"`
}

// Placeholders returns the names of a key's placeholders, in order: i, j
// of llm.input_messages.<i>.message.contents.<j>.message_content.text.
func Placeholders(key string) []string {
	var out []string
	for _, seg := range strings.Split(key, ".") {
		if name, ok := placeholder(seg); ok {
			out = append(out, name)
		}
	}
	return out
}

// placeholder is the name of a segment <name>.
func placeholder(seg string) (string, bool) {
	if len(seg) > 2 && seg[0] == '<' && seg[len(seg)-1] == '>' {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

// MatchKey reports whether key is an instance of pattern: each placeholder
// segment of pattern stands for a segment of digits.
func MatchKey(pattern, key string) bool {
	if !strings.Contains(pattern, "<") {
		return pattern == key
	}
	ps, ks := strings.Split(pattern, "."), strings.Split(key, ".")
	if len(ps) != len(ks) {
		return false
	}
	for i, p := range ps {
		if _, ok := placeholder(p); ok {
			if !digits(ks[i]) {
				return false
			}
		} else if p != ks[i] {
			return false
		}
	}
	return true
}

func digits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// overlap reports whether some key is an instance of both patterns.
func overlap(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		_, pa := placeholder(as[i])
		_, pb := placeholder(bs[i])
		switch {
		case pa && pb, as[i] == bs[i]:
		case pa && digits(bs[i]), pb && digits(as[i]):
		default:
			return false
		}
	}
	return true
}

var (
	attributeTypes = map[string]bool{"string": true, "int": true, "double": true, "bool": true, "slice": true}
	elementTypes   = map[string]bool{"string": true, "int": true, "double": true, "bool": true}
)

// checkTable checks one table: types, descriptions, "set", placeholders,
// and that no two keys can name the same attribute.
func checkTable(name string, r RecordAttributes) error {
	var errs []error
	fail := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s %s: "+format, append([]any{name, key}, a...)...))
	}
	for i, e := range r {
		a := e.Value
		if !attributeTypes[a.Type] {
			fail(e.Key, "type %q is not one of string, int, double, bool, slice", a.Type)
		}
		if (a.Type == "slice") != (a.ElementType != "") || (a.ElementType != "" && !elementTypes[a.ElementType]) {
			fail(e.Key, "a slice, and only a slice, has an element_type (string, int, double, bool)")
		}
		if a.Description == "" {
			fail(e.Key, "no description")
		}
		if a.Set == "" && !a.Content {
			fail(e.Key, "no set (always, or when it is set)")
		}
		if a.Content && a.Always() {
			fail(e.Key, "content is never always set")
		}
		seen := map[string]bool{}
		for _, seg := range strings.Split(e.Key, ".") {
			p, ok := placeholder(seg)
			switch {
			case seg == "":
				fail(e.Key, "an empty segment")
			case !ok && !strings.ContainsAny(seg, "<>"):
			case !ok || len(p) != 1 || p[0] < 'a' || p[0] > 'z':
				fail(e.Key, "segment %q: a placeholder is a whole segment, one lowercase letter in <>", seg)
			case seen[p]:
				fail(e.Key, "placeholder <%s> twice", p)
			default:
				seen[p] = true
			}
		}
		if a.Always() && len(seen) > 0 {
			fail(e.Key, "a key with placeholders is not always set")
		}
		for _, f := range r[:i] {
			if overlap(f.Key, e.Key) {
				fail(e.Key, "names the same attributes as %s", f.Key)
			}
		}
	}
	return errors.Join(errs...)
}

// checkRecords checks the record sections of c.
func (c *Component) checkRecords() error {
	errs := []error{
		checkTable("span attribute", c.SpanAttributes),
		checkTable("resource attribute", c.ResourceAttributes),
	}
	for _, kind := range c.LogAttributes {
		errs = append(errs, checkTable("log attribute "+kind.Key, kind.Value))
	}
	for _, ev := range c.SpanEvents {
		if ev.Value.Description == "" {
			errs = append(errs, fmt.Errorf("span event %s: no description", ev.Key))
		}
	}
	return errors.Join(errs...)
}
