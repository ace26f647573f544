package awsfake

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// AccessEntry is an EKS access entry DescribeAccessEntry reports.
type AccessEntry struct {
	Cluster          string
	PrincipalARN     string
	KubernetesGroups []string
	Username         string // EKS's default for a role when empty
}

// AddAccessEntry makes an access entry visible to DescribeAccessEntry.
func (s *Server) AddAccessEntry(e AccessEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.more.entries = append(s.more.entries, e)
}

// describeAccessEntry answers EKS's GET
// /clusters/NAME/access-entries/PRINCIPAL_ARN.
func (s *Server) describeAccessEntry(w http.ResponseWriter, r *http.Request, fault Fault) {
	cluster, principal, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/clusters/"), "/access-entries/")
	cluster, err1 := url.PathUnescape(cluster)
	principal, err2 := url.PathUnescape(principal)
	if err1 != nil || err2 != nil {
		writeJSONError(w, http.StatusBadRequest, "InvalidParameterException", "malformed path")
		return
	}
	if fault != 0 && fault != NotFound {
		restFault(w, ServiceEKS, "DescribeAccessEntry", fault)
		return
	}
	s.mu.Lock()
	_, known := s.clusters[cluster]
	i := slices.IndexFunc(s.more.entries, func(e AccessEntry) bool { return e.Cluster == cluster && e.PrincipalARN == principal })
	var e AccessEntry
	if i >= 0 {
		e = s.more.entries[i]
	}
	s.mu.Unlock()
	switch {
	case !known || fault == NotFound:
		writeJSONError(w, http.StatusNotFound, "ResourceNotFoundException", "No cluster found for name: "+cluster+".")
		return
	case i < 0:
		writeJSONError(w, http.StatusNotFound, "ResourceNotFoundException",
			"The specified principalArn could not be found. You can view your available access entries with 'list-access-entries'.")
		return
	}
	user := e.Username
	if user == "" {
		user = defaultUsername(principal)
	}
	writeJSON(w, http.StatusOK, map[string]any{"accessEntry": map[string]any{
		"clusterName":      cluster,
		"principalArn":     principal,
		"kubernetesGroups": e.KubernetesGroups,
		"username":         user,
		"type":             "STANDARD",
		"accessEntryArn":   "arn:aws:eks:" + Region + ":111122223333:access-entry/" + cluster + "/role/111122223333/x/00000000",
	}})
}

// defaultUsername is the username EKS gives an IAM role's entry.
func defaultUsername(principal string) string {
	i := strings.LastIndex(principal, "/")
	if !strings.Contains(principal, ":role/") || i < 0 {
		return principal
	}
	account := strings.Split(principal, ":")[4]
	return "arn:aws:sts::" + account + ":assumed-role/" + principal[i+1:] + "/{{SessionName}}"
}
