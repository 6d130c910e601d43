//go:build !unix

package supervisorreceiver

import "os"

// Spawn mode needs a Unix system: no engine, no record to check.

func openRecord(path string) (*os.File, error) { return os.Open(path) }

func checkRecordDir(string) error { return nil }
