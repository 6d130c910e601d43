//go:build !unix

package preflight

// liveEngineRecorded: the supervisor runs no engine on this system.
func liveEngineRecorded(string) bool { return false }
