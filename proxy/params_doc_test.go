package proxy

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateDoc = flag.Bool("update", false, "rewrite documentation.md's table of the sampling parameters from paramRules")

// The documentation's table of the sampling parameters is paramRules as
// the proxy checks them, so a rule is written in one place; run with
// -update to rewrite it.
func TestParamsTable(t *testing.T) {
	const doc = "../extension/proxyextension/documentation.md"
	const begin, end = "   <!-- paramrules:begin -->\n", "   <!-- paramrules:end -->"
	old, err := os.ReadFile(doc)
	require.NoError(t, err)
	i, j := bytes.Index(old, []byte(begin)), bytes.Index(old, []byte(end))
	require.True(t, i >= 0 && j > i, "%s has the markers %q and %q", doc, begin, end)
	updated := slices.Concat(old[:i+len(begin)], []byte(paramsTable()), old[j:])
	if *updateDoc {
		require.NoError(t, os.WriteFile(doc, updated, 0o644))
		return
	}
	require.Equal(t, string(updated), string(old), "%s's table of the sampling parameters is stale: go test ./proxy -run TestParamsTable -update", doc)
}

// paramsTable is paramRules as a markdown table, indented as the list item
// that holds it.
func paramsTable() string {
	var b strings.Builder
	b.WriteString("   | member | passes | refused |\n   |---|---|---|\n")
	for _, r := range paramRules {
		pass := r.typeNames()
		switch {
		case r.min != nil && r.max != nil && *r.min == *r.max:
			pass += " equal to " + fmtBound(*r.min)
		case r.min != nil && r.max != nil:
			pass += " from " + fmtBound(*r.min) + " to " + fmtBound(*r.max)
		case r.min != nil:
			pass += " ≥ " + fmtBound(*r.min)
		case r.max != nil:
			pass += " ≤ " + fmtBound(*r.max)
		}
		if r.whitelist != nil {
			pass += ", or " + fmtBound(*r.whitelist)
		}
		if r.optional {
			pass += ", or `null`"
		}
		if slices.Contains(int32Params, r.key) && r.ints {
			pass += "; an integer value within int32's range (MLX casts it to a C++ integer in the generation thread and raises beyond it)"
		}
		if r.doc != "" {
			pass += "; " + r.doc
		}
		refused := "another type (`invalid_type`)"
		if r.min != nil || r.max != nil {
			refused += ", out of range (`invalid_value`)"
		}
		fmt.Fprintf(&b, "   | `%s` | %s | %s |\n", r.key, pass, refused)
	}
	return b.String()
}
