// Package nodemap finds the Kubernetes node running on an EC2 instance.
package nodemap

import "errors"

// ErrNotFound means no node runs on the instance (never joined, or gone).
var ErrNotFound = errors.New("node not found")
