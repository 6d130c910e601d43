package judge

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// mlxjudge reads the proxy's in-flight count from /metrics, with the
// proxy's bearer token when it has one.
func TestScrapeInFlight(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "token", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("# TYPE mlx_in_flight gauge\nmlx_in_flight{model=\"a\"} 2\nmlx_in_flight{model=\"b\"} 1\n# TYPE mlx_up gauge\nmlx_up 1\n"))
	}))
	defer srv.Close()
	n, err := ScrapeInFlight(srv.Client(), srv.URL+"/metrics", "s3cret")()
	if err != nil || n != 3 {
		t.Errorf("in flight %d, %v; want 3 (summed over models)", n, err)
	}
	if _, err := ScrapeInFlight(srv.Client(), srv.URL+"/metrics", "")(); err == nil {
		t.Error("a refused scrape is not an error")
	}
}
