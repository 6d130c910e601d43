package opiktest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikid"
)

// Opik's dashboards API, as DashboardsResource.java and the generated
// clients describe it (facts; see the package doc for what is guessed):
//   - POST /v1/private/dashboards {name (1-120), description, type
//     (multi_project | experiments, default multi_project), project_id,
//     project_name, config (a JSON object, required, stored as it is)}:
//     201, a Location header and the dashboard. The server makes the id (a
//     UUIDv7), and the project when project_name names a new one.
//   - GET /v1/private/dashboards?name=&page=&size=: a page {content, page,
//     size, total, sortable_by}; name matches a part of the name, case
//     insensitive.
//   - GET, PATCH (fields given replace, the config whole) and DELETE
//     /v1/private/dashboards/{id}: 200, 200, 204 (204 for an unknown id
//     too); GET and PATCH of an unknown id 404.

// Dashboard is a stored dashboard, in the JSON shape of DashboardPublic.
type Dashboard struct {
	ID          string          `json:"id"`
	ProjectID   string          `json:"project_id,omitempty"`
	Name        string          `json:"name"`
	Type        string          `json:"type"`
	Description string          `json:"description,omitempty"`
	Config      json.RawMessage `json:"config"`
	CreatedAt   time.Time       `json:"created_at"`
}

type dashboardWrite struct {
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Type        *string         `json:"type"`
	ProjectID   *string         `json:"project_id"`
	ProjectName *string         `json:"project_name"`
	Config      json.RawMessage `json:"config"`
}

// serveDashboards answers the dashboards API; ok is false for other paths.
func (s *Server) serveDashboards(w http.ResponseWriter, r *http.Request, path string) bool {
	const base = "/v1/private/dashboards"
	if path != base && !strings.HasPrefix(path, base+"/") {
		return false
	}
	id := strings.TrimPrefix(strings.TrimPrefix(path, base), "/")
	switch {
	case id == "" && r.Method == http.MethodPost:
		s.createDashboard(w, r)
	case id == "" && r.Method == http.MethodGet:
		s.listDashboards(w, r)
	case id != "" && r.Method == http.MethodGet:
		s.withDashboard(w, id, func(d *Dashboard) { writeJSON(w, http.StatusOK, d) })
	case id != "" && r.Method == http.MethodPatch:
		s.patchDashboard(w, r, id)
	case id != "" && r.Method == http.MethodDelete:
		s.mu.Lock()
		delete(s.dashboards, id)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		writeErrors(w, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func readWrite(w http.ResponseWriter, r *http.Request) (dashboardWrite, bool) {
	var d dashboardWrite
	body, err := readBody(r)
	if err == nil {
		err = json.Unmarshal(body, &d)
	}
	if err != nil {
		writeErrors(w, http.StatusBadRequest, "Unable to process JSON")
		return d, false
	}
	if d.Type != nil && *d.Type != "multi_project" && *d.Type != "experiments" {
		writeErrors(w, http.StatusBadRequest, "Unable to process JSON")
		return d, false
	}
	if d.Config != nil && (len(d.Config) == 0 || d.Config[0] != '{') {
		writeErrors(w, http.StatusUnprocessableEntity, "config must be a JSON object")
		return d, false
	}
	return d, true
}

func (s *Server) createDashboard(w http.ResponseWriter, r *http.Request) {
	d, ok := readWrite(w, r)
	if !ok {
		return
	}
	switch {
	case d.Name == nil || strings.TrimSpace(*d.Name) == "" || len(*d.Name) > 120:
		writeErrors(w, http.StatusUnprocessableEntity, "name must not be blank", "name size must be between 1 and 120")
		return
	case d.Config == nil:
		writeErrors(w, http.StatusUnprocessableEntity, "config must not be null")
		return
	}
	now := time.Now()
	out := &Dashboard{ID: opikid.New(now), Name: *d.Name, Type: "multi_project", Config: d.Config, CreatedAt: now.UTC()}
	if d.Type != nil {
		out.Type = *d.Type
	}
	if d.Description != nil {
		out.Description = *d.Description
	}
	s.mu.Lock()
	switch {
	case d.ProjectID != nil && *d.ProjectID != "":
		out.ProjectID = *d.ProjectID
	case d.ProjectName != nil && *d.ProjectName != "":
		out.ProjectID = s.projectIDLocked(*d.ProjectName)
	}
	s.dashboards[out.ID] = out
	s.mu.Unlock()
	w.Header().Set("Location", "http://"+r.Host+r.URL.Path+"/"+out.ID)
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) listDashboards(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name := strings.ToLower(q.Get("name"))
	page, _ := strconv.Atoi(q.Get("page"))
	size, _ := strconv.Atoi(q.Get("size"))
	if q.Get("size") == "" {
		size = 10
	}
	page, size = max(page, 1), max(size, 1)
	var all []*Dashboard
	s.mu.Lock()
	for _, d := range s.dashboards {
		if strings.Contains(strings.ToLower(d.Name), name) {
			all = append(all, d)
		}
	}
	s.mu.Unlock()
	from := min((page-1)*size, len(all))
	to := min(from+size, len(all))
	writeJSON(w, http.StatusOK, map[string]any{"page": page, "size": to - from, "total": len(all), "content": all[from:to], "sortable_by": []string{}})
}

func (s *Server) patchDashboard(w http.ResponseWriter, r *http.Request, id string) {
	d, ok := readWrite(w, r)
	if !ok {
		return
	}
	s.withDashboard(w, id, func(out *Dashboard) {
		if d.Name != nil {
			out.Name = *d.Name
		}
		if d.Description != nil {
			out.Description = *d.Description
		}
		if d.Type != nil {
			out.Type = *d.Type
		}
		if d.Config != nil {
			out.Config = d.Config
		}
		writeJSON(w, http.StatusOK, out)
	})
}

func (s *Server) withDashboard(w http.ResponseWriter, id string, f func(*Dashboard)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.dashboards[id]
	if !ok {
		writeErrors(w, http.StatusNotFound, "Dashboard not found")
		return
	}
	f(d)
}

// projectIDLocked is a project's id, the project made on first use.
func (s *Server) projectIDLocked(name string) string {
	id, ok := s.projects[name]
	if !ok {
		id = opikid.New(time.Now())
		s.projects[name] = id
	}
	return id
}

// ProjectID is the id of a project the stand-in made ("" when none).
func (s *Server) ProjectID(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.projects[name]
}

// Dashboards returns the stored dashboards.
func (s *Server) Dashboards() []Dashboard {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Dashboard
	for _, d := range s.dashboards {
		out = append(out, *d)
	}
	return out
}
