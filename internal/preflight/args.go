package preflight

import "strings"

// valueFlags are the collector's flags that take a value as the next
// argument (otelcol's flags.go), so that value is not a subcommand.
var valueFlags = map[string]bool{"config": true, "set": true, "feature-gates": true}

// subcommand is the collector subcommand the arguments (os.Args[1:]) name:
// "validate", "print-config", ...; "" when they run the collector itself.
// Like cobra, it takes the first argument that is neither a flag nor a
// flag's value.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && valueFlags[name] {
				i++ // its value
			}
			continue
		}
		return a
	}
	return ""
}

// off says whether MLX_PREFLIGHT turns the preflight off.
func off(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "0", "false", "no":
		return true
	}
	return false
}
