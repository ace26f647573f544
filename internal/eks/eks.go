// Package eks authenticates to EKS clusters and builds their clients.
package eks
