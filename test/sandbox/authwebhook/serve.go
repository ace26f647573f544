package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	"sigs.k8s.io/aws-iam-authenticator/pkg/config"
	"sigs.k8s.io/aws-iam-authenticator/pkg/mapper"
	"sigs.k8s.io/aws-iam-authenticator/pkg/metrics"
	"sigs.k8s.io/aws-iam-authenticator/pkg/server"
)

// serve runs the fake STS and the authenticator until ctx ends.
func serve(ctx context.Context, c Config) error {
	logrus.SetFormatter(&logrus.JSONFormatter{})
	logrus.SetOutput(os.Stderr)
	// The handler asks the instance metadata service for its region; there
	// is none here, and nothing may leave loopback.
	if err := os.Setenv("AWS_EC2_METADATA_DISABLED", "true"); err != nil {
		return fmt.Errorf("disabling IMDS: %w", err)
	}
	sts, err := startSTS(c.Identities)
	if err != nil {
		return err
	}
	defer sts.close()
	// The verifier accepts only real STS host names and calls them with
	// its own http.Client, whose transport is http.DefaultTransport.
	http.DefaultTransport = sts.transport()

	metrics.InitMetrics(prometheus.NewRegistry())
	cfg := config.Config{
		PartitionID: "aws",
		ClusterID:   c.ClusterID,
		Address:     "127.0.0.1",
		Hostname:    "127.0.0.1",
		HostPort:    c.Port,
		// Upstream serves /healthz on ":<HealthPort>", every interface; an
		// invalid port keeps that listener from ever opening (it logs one
		// error). The webhook's own TLS port answers /healthz as well.
		HealthPort:             -1,
		StateDir:               c.StateDir,
		GenerateKubeconfigPath: c.Kubeconfig,
		BackendMode:            []string{mapper.ModeMountedFile},
	}
	for _, m := range c.MapRoles {
		cfg.RoleMappings = append(cfg.RoleMappings, config.RoleMapping{RoleARN: m.RoleARN, Username: m.Username, Groups: m.Groups})
	}
	if err := os.MkdirAll(c.StateDir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", c.StateDir, err)
	}
	if err := checkFree(c.Port); err != nil {
		return err // server.New would exit through logrus.Fatal
	}
	srvCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := server.New(srvCtx, cfg)
	stopCh := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Run(stopCh)
	}()
	logrus.WithFields(logrus.Fields{"cluster": c.ClusterID, "sts": sts.addr}).Info("sandbox token webhook ready")
	select {
	case <-ctx.Done():
	case <-done:
		return errors.New("webhook server stopped unexpectedly")
	}
	close(stopCh)
	srv.Close()
	<-done
	return nil
}

// checkFree fails early, with a clear error, when the port is taken.
func checkFree(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("webhook port: %w", err)
	}
	return l.Close()
}
