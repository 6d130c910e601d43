package proxy

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
)

// Every constructor of a refusal: its status, its body in OpenAI's error
// shape (exact bytes), its headers, the outcome it gives a completion's
// record and the series it moves, through the one writer.
func TestEveryRefusalAsWrittenAndCounted(t *testing.T) {
	inv := func(code, param, msg string) string {
		p := "null"
		if param != "" {
			p = `"` + param + `"`
		}
		return `{"error":{"code":"` + code + `","message":"` + msg + `","param":` + p + `,"type":"invalid_request_error"}}`
	}
	must := func(r refusal, _ bool) refusal { return r }
	for _, c := range []struct {
		name    string
		ref     refusal
		status  int
		body    string
		headers map[string]string // "" : absent
		outcome Outcome
		counted bool // in mlx_http_refusals_total (else the request series, as it ends)
	}{
		{"badRequest", must(badRequest("invalid_value", "top_p", "`%s` must be at most %d.", "top_p", 1)), 400,
			inv("invalid_value", "top_p", "`top_p` must be at most 1."), map[string]string{"Connection": "", "Retry-After": ""}, OutcomeRefused, true},
		{"modelNotFound", modelNotFound("no such model"), 404, inv("model_not_found", "model", "no such model"), nil, OutcomeRefused, true},
		{"invalidJSON", invalidJSON(errors.New("Expecting value")), 400, inv("invalid_json", "", "Expecting value"), map[string]string{"Connection": ""}, OutcomeRefused, true},
		{"unsupportedMediaType", unsupportedMediaType("send JSON"), 415, inv("unsupported_media_type", "", "send JSON"),
			map[string]string{"Connection": "close"}, OutcomeRefused, true},
		{"bodyTooLarge", bodyTooLarge("too large"), 413, inv("request_too_large", "", "too large"), map[string]string{"Connection": "close"}, OutcomeTooLarge, true},
		{"bodyTimeout", bodyTimeout("too slow"), 408, inv("request_timeout", "", "too slow"), map[string]string{"Connection": "close"}, OutcomeRefused, true},
		{"malformedBody", malformedBody("bad chunk"), 400, inv("malformed_body", "", "bad chunk"), map[string]string{"Connection": "close"}, OutcomeRefused, true},
		{"incompleteBody", incompleteBody("cut short"), 400, inv("incomplete_body", "", "cut short"), map[string]string{"Connection": "close"}, OutcomeClientGone, true},
		{"unauthorized", unauthorized("missing_api_key", "a key"), 401, inv("missing_api_key", "", "a key"),
			map[string]string{"Connection": "close", "WWW-Authenticate": `Bearer realm="mlx-otelcol"`}, OutcomeRefused, true},
		{"forbidden", forbidden("remote_not_allowed", "not here"), 403, inv("remote_not_allowed", "", "not here"),
			map[string]string{"Connection": "close", "WWW-Authenticate": ""}, OutcomeRefused, true},
		{"tooManyRequests", tooManyRequests("busy"), 429, `{"error":{"code":"too_many_requests","message":"busy","param":null,"type":"rate_limit_exceeded"}}`,
			map[string]string{"Connection": "close", "Retry-After": "1"}, OutcomeRefused, true},
		{"methodNotAllowed", methodNotAllowed("GET, HEAD", "PUT is not allowed"), 405, inv("method_not_allowed", "", "PUT is not allowed"),
			map[string]string{"Allow": "GET, HEAD", "Connection": ""}, OutcomeRefused, true},
		{"methodNotAllowed closed", methodNotAllowed("POST", "GET is not allowed").closed(), 405, inv("method_not_allowed", "", "GET is not allowed"),
			map[string]string{"Allow": "POST", "Connection": "close"}, OutcomeRefused, true},
		{"routeNotFound", routeNotFound("Unknown path"), 404, inv("not_found", "", "Unknown path"), nil, OutcomeRefused, true},
		{"invalidRequest", invalidRequest(http.StatusConflict, "feedback_exists", "score", "once"), 409, inv("feedback_exists", "score", "once"), nil, OutcomeRefused, true},
		{"unavailable", unavailable("feedback_dropped", "retry"), 503, `{"error":{"code":"feedback_dropped","message":"retry","param":null,"type":"server_error"}}`,
			map[string]string{"Retry-After": "1", "Connection": ""}, OutcomeRefused, true},
		{"upstreamFailure", upstreamFailure(http.StatusGatewayTimeout, OutcomeTimeout, "upstream_timeout", "late"), 504,
			`{"error":{"code":"upstream_timeout","message":"late","param":null,"type":"server_error"}}`,
			map[string]string{"Connection": "", "Retry-After": ""}, OutcomeTimeout, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, route := range []Route{RouteChat, RouteText, RouteOther} {
				p, err := New(DefaultConfig(), zap.NewNop())
				require.NoError(t, err)
				var rec *Record
				if route != RouteOther {
					rec = &Record{Route: route, Facts: span.Facts{Client: ClientLocal}}
				}
				w := httptest.NewRecorder()
				p.refuse(w, httptest.NewRequest(http.MethodPost, "/x", strings.NewReader("{}")), rec, c.ref)

				assert.Equal(t, c.status, w.Code)
				assert.Equal(t, c.body, w.Body.String(), "OpenAI's error shape, byte for byte")
				assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
				for k, v := range c.headers {
					assert.Equal(t, v, w.Header().Get(k), k)
				}

				label := map[Route]string{RouteChat: "chat_completions", RouteText: "completions", RouteOther: "other"}[route]
				series := testutil.CollectAndCount(p.metrics.mlxHttpRefusalsTotal)
				refusals := testutil.ToFloat64(p.metrics.mlxHttpRefusalsTotal.WithLabelValues(label, strconv.Itoa(c.status)))
				// A client gone while sending its body is counted as its
				// caller's other ends of a client gone are (2xx: no error).
				clients := 0.0
				for _, class := range []string{"2xx", "4xx", "5xx"} {
					clients += testutil.ToFloat64(p.metrics.mlxClientRequestsTotal.WithLabelValues(ClientLocal, class))
				}
				if !c.counted {
					assert.Equal(t, preCreatedRefusals(), series, "not a refusal")
					assert.Equal(t, 0.0, refusals)
					assert.Equal(t, 0.0, clients, "counted as the request ends, not here")
					if rec != nil {
						assert.Equal(t, c.status, rec.Status)
						assert.Equal(t, c.outcome, rec.Outcome)
					}
					return
				}
				assert.Equal(t, 1.0, refusals, "mlx_http_refusals_total{route=%q}", label)
				if rec == nil {
					assert.Equal(t, 0.0, clients, "no caller known on another route")
					return
				}
				assert.Equal(t, 1.0, clients, "mlx_client_requests_total of its caller")
				assert.Equal(t, c.status, rec.Status)
				assert.Equal(t, c.outcome, rec.Outcome)
				assert.False(t, rec.End.IsZero(), "the refusal ends the record")
			}
		})
	}
}

// preCreatedRefusals is how many mlx_http_refusals_total series exist from
// the start at 0.
func preCreatedRefusals() int {
	p, _ := New(DefaultConfig(), zap.NewNop())
	return testutil.CollectAndCount(p.metrics.mlxHttpRefusalsTotal)
}
