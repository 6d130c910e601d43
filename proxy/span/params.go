package span

import "encoding/json"

// The request's members the span's GenAI and OpenInference attributes
// read, beside Request.number (request.go).

// str is the request's member k when it is a string.
func (rf *Request) str(k string) (string, bool) {
	var s string
	raw := rf.fields[k]
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// sessionID is the body's metadata.session_id (a string or a number).
func (rf *Request) sessionID() string {
	var m struct {
		SessionID json.RawMessage `json:"session_id"`
	}
	if json.Unmarshal(rf.fields["metadata"], &m) != nil || len(m.SessionID) == 0 || isNull(m.SessionID) {
		return ""
	}
	var s string
	if json.Unmarshal(m.SessionID, &s) == nil {
		return s
	}
	if _, ok := number(m.SessionID); ok {
		return string(m.SessionID)
	}
	return ""
}

// outputType is gen_ai.output.type of the request's response_format:
// text, or json for json_object and json_schema; "" without one.
func (rf *Request) outputType() string {
	var rfmt struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(rf.fields["response_format"], &rfmt) != nil {
		return ""
	}
	switch rfmt.Type {
	case "text":
		return "text"
	case "json_object", "json_schema":
		return "json"
	}
	return ""
}

// stopSequences is the request's stop: a string or a list of strings.
func (rf *Request) stopSequences() []string { return stringOrStrings(rf.fields["stop"]) }
