// Package lifecycle heartbeats and completes Auto Scaling lifecycle actions.
package lifecycle
