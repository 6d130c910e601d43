// Package pyjson is Python's json module's exact output and input rules as
// mlx_lm.server uses them (CPython 3.12, C accelerator), for the simulator
// in standins/mlxsim.
//
// encoding/json cannot be used, in either direction:
//
//   - Encoding: mlx_lm builds every body with json.dumps, i.e. separators ", "
//     and ": ", keys in dict insertion order (not sorted, not struct order),
//     ensure_ascii (every non-ASCII character as \uXXXX, astral characters as
//     surrogate pairs, lowercase hex), floats in Python repr (1e-05, 1.0,
//     -0.00390625, 1e+16) and NaN/Infinity literals. encoding/json writes
//     compact separators, escapes <, > and & instead, leaves non-ASCII raw and
//     formats floats differently.
//   - Decoding: mlx_lm's validation depends on Python types: 5 is an int but
//     5.0 is a float ("max_tokens must be of type int"), true is also an int,
//     NaN and Infinity parse, duplicate keys keep the first position and the
//     last value. The 400 body quotes Python's exact error text, e.g.
//     "Expecting value: line 1 column 1 (char 0)", with positions counted in
//     code points. encoding/json gives none of that.
//
// Values are represented as: nil (None), bool, [Int] (int), float64 (float),
// string (str), []any (list) and *[Dict] (dict). Lone surrogates, which
// Python strings may hold, are carried in Go strings as their 3-byte
// generalized UTF-8 form.
//
// Files by job: dict.go (the dict), value.go (int, type names, truthiness),
// encode.go (json.dumps), decode.go (json.loads), repr.go (repr of floats
// and strs), utf8.go (bytes.decode and lone surrogates).
package pyjson
