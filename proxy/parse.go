package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// The front door reads every completion body once, as mlx_lm will read
// it, and fails closed: a body the proxy cannot read never reaches the
// engine. mlx_lm does json.loads(raw_body.decode()) (server.py, do_POST),
// so the proxy accepts what that accepts and nothing else:
//
//   - UTF-8 only: bytes.decode() is strict, and a UnicodeDecodeError is not
//     the JSONDecodeError mlx_lm catches (its handler dies with a
//     traceback).
//   - NaN, Infinity and -Infinity as numbers: json.loads takes them, Go's
//     encoding/json does not, so they are read as null for the checks
//     while the body goes upstream as the client sent it.
//   - Duplicate keys: the last one wins, in Python's dict and in a Go map
//     alike, so the checks see the member the engine will use.
//   - Nesting: Python's decoder recurses and raises RecursionError (again
//     not a JSONDecodeError) near its recursion limit of 1000; Go's stops
//     at 10000. No request needs more than maxBodyDepth levels.
//   - A JSON object: mlx_lm answers anything else with its own 400, after
//     logging the whole body at ERROR (forged log lines, a log flood).

// maxBodyDepth is the deepest nesting of arrays and objects a completion
// body may have.
const maxBodyDepth = 128

// errBody is a body the proxy refuses to pass on; its message is the
// client's answer.
type errBody struct{ msg string }

func (e *errBody) Error() string { return e.msg }

// parsedBody is a completion body as the checks read it.
type parsedBody struct {
	// fields are the body's members, the last of duplicate keys; a NaN or
	// Infinity in them reads as null.
	fields map[string]json.RawMessage
	// nonFinite names the members whose value is NaN, Infinity or
	// -Infinity (nil when none is).
	nonFinite map[string]bool
}

// parseBody reads a completion body, or returns an *errBody.
func parseBody(body []byte) (parsedBody, error) {
	if len(body) == 0 {
		return parsedBody{}, &errBody{"the request body is empty; it must be a JSON object"}
	}
	if !utf8.Valid(body) {
		return parsedBody{}, &errBody{"the request body is not valid UTF-8"}
	}
	if jsonedit.Depth(body) > maxBodyDepth {
		return parsedBody{}, &errBody{fmt.Sprintf("the request body nests deeper than %d levels", maxBodyDepth)}
	}
	var pb parsedBody
	err := json.Unmarshal(body, &pb.fields)
	if err != nil {
		// The slow path: Python's non-finite literals.
		if nulled, changed := jsonedit.NullPythonLiterals(body); changed {
			if err = json.Unmarshal(nulled, &pb.fields); err == nil {
				pb.nonFinite = nonFiniteMembers(body)
			}
		}
	}
	var typeErr *json.UnmarshalTypeError
	if err == nil {
		overflowing(&pb)
	}
	switch {
	case errors.As(err, &typeErr):
		return parsedBody{}, &errBody{"the request body must be a JSON object"}
	case err != nil:
		return parsedBody{}, &errBody{"the request body is not valid JSON: " + err.Error()}
	case pb.fields == nil:
		return parsedBody{}, &errBody{"the request body must be a JSON object"}
	}
	return pb, nil
}

// nonFiniteMembers names the top-level members of obj whose value is one
// of Python's non-finite literals (of duplicate keys, the last one, as
// Python keeps it).
func nonFiniteMembers(obj []byte) map[string]bool {
	o, err := jsonedit.ScanObject(obj)
	if err != nil {
		return nil
	}
	last := make(map[string]bool, len(o.Members))
	for _, m := range o.Members {
		key, ok := jsonedit.AppendString(nil, obj[m.KS:m.KE])
		if !ok {
			continue
		}
		switch string(o.Value(m)) {
		case "NaN", "Infinity", "-Infinity":
			last[string(key)] = true
		default:
			last[string(key)] = false
		}
	}
	names := map[string]bool{}
	for k, nonFinite := range last {
		if nonFinite {
			names[k] = true
		}
	}
	return names
}

// overflowing adds to nonFinite the top-level members whose float literal
// is too large for a double: json.loads reads 1e400 as inf, as it reads
// Infinity (an integer literal stays an exact int in Python).
func overflowing(pb *parsedBody) {
	for k, v := range pb.fields {
		if len(v) == 0 || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) || !bytes.ContainsAny(v, ".eE") {
			continue
		}
		if f, err := strconv.ParseFloat(string(v), 64); err != nil && math.IsInf(f, 0) {
			if pb.nonFinite == nil {
				pb.nonFinite = map[string]bool{}
			}
			pb.nonFinite[k] = true
		}
	}
}
