package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// writeError answers with an OpenAI-style error body, so clients' SDKs
// show the message instead of a parse failure.
func writeError(w http.ResponseWriter, status int, typ, code, message string) {
	writeErrorParam(w, status, typ, code, "", message)
}

// writeErrorParam is writeError naming the request member at fault.
func writeErrorParam(w http.ResponseWriter, status int, typ, code, param, message string) {
	var p any
	if param != "" {
		p = param
	}
	body, _ := json.Marshal(map[string]any{
		"error": map[string]any{
			"message": message,
			"type":    typ,
			"param":   p,
			"code":    code,
		},
	})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
