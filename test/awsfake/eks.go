package awsfake

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
)

// Cluster is an EKS cluster the fake describes.
type Cluster struct {
	Name     string
	Endpoint string // the API server URL, https://...
	CAData   []byte // PEM; sent base64-encoded as EKS does
	Status   string // ACTIVE when empty
	Version  string // 1.36 when empty
	// AuthMode is accessConfig.authenticationMode (API,
	// API_AND_CONFIG_MAP, CONFIG_MAP); not reported when empty.
	AuthMode string
}

// AddCluster makes a cluster visible to DescribeCluster.
func (s *Server) AddCluster(c Cluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clusters[c.Name] = c
}

func (s *Server) describeCluster(w http.ResponseWriter, name string, fault Fault) {
	s.mu.Lock()
	c, ok := s.clusters[name]
	s.mu.Unlock()
	switch {
	case fault == Throttle:
		writeJSONError(w, http.StatusTooManyRequests, "ThrottlingException", "Rate exceeded")
		return
	case fault == AccessDenied:
		writeJSONError(w, http.StatusForbidden, "AccessDeniedException",
			"User: arn:aws:sts::111122223333:assumed-role/drainpipe/fn is not authorized to perform: eks:DescribeCluster")
		return
	case fault == NotFound || (fault == 0 && !ok):
		writeJSONError(w, http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: "+name+".")
		return
	case fault != 0:
		writeJSONError(w, http.StatusInternalServerError, "ServerException", "An internal error has occurred")
		return
	}
	status, version := c.Status, c.Version
	if status == "" {
		status = "ACTIVE"
	}
	if version == "" {
		version = "1.36"
	}
	body := map[string]any{"cluster": map[string]any{
		"name":                 c.Name,
		"arn":                  "arn:aws:eks:" + Region + ":111122223333:cluster/" + c.Name,
		"endpoint":             c.Endpoint,
		"status":               status,
		"version":              version,
		"certificateAuthority": map[string]string{"data": base64.StdEncoding.EncodeToString(c.CAData)},
	}}
	if c.AuthMode != "" {
		body["cluster"].(map[string]any)["accessConfig"] = map[string]string{"authenticationMode": c.AuthMode}
	}
	writeJSON(w, http.StatusOK, body)
}

func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("X-Amzn-Errortype", code)
	writeJSON(w, status, map[string]string{"message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}
