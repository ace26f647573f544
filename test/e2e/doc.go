// Package e2e tests the real Lambda bootstrap end to end: the binary built
// as it is deployed, run under the local Runtime API (test/lambdart), fed
// SQS batches shaped as AWS delivers them and, in live mode, acting on the
// sandbox control plane (test/sandbox) through the AWS API fakes
// (test/awsfake). Everything here is skipped under -short.
package e2e
