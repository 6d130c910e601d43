// Package chatcontent reads the text of an OpenAI chat message's content,
// for the proxy (the live stream's conversations) and the judge (the
// question and the answer it grades).
package chatcontent

import (
	"encoding/json"
	"strings"
)

// Text is a message content's text: the string, or the text parts of a
// list of parts joined by newlines; "" for anything else (null, images
// only, not JSON).
func Text(raw json.RawMessage) string { return Join(raw, "\n") }

// Join is Text with the parts joined by sep (mlx_lm v0.31.3 server.py,
// process_message_content, joins them with "").
func Join(raw json.RawMessage, sep string) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, sep)
}
