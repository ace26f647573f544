package sandbox

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

//go:embed stages/*.yaml
var stages embed.FS

// controllers are the kube-controller-manager loops drains depend on. Node
// lifecycle and taint eviction stay off: kwok nodes have no real kubelet
// heartbeat to judge, and their evictions would race the drain under test.
var controllers = []string{
	"replicaset-controller", "deployment-controller", "daemonset-controller",
	"statefulset-controller", "job-controller", "disruption-controller",
	"garbage-collector-controller", "serviceaccount-controller", "namespace-controller",
	"pod-garbage-collector-controller", "root-ca-certificate-publisher-controller",
}

func writeConfigs(p paths, pt ports) error {
	sched := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
  plugins:
    # Node affinity outweighs everything else, so a preferred node
    # affinity places pods deterministically (fixtures put workloads on a
    # node that way, and replacements land elsewhere once it is cordoned);
    # resource fit still spreads pods that state no preference.
    score:
      disabled:
      - name: "*"
      enabled:
      - name: NodeAffinity
        weight: 20
      - name: TaintToleration
        weight: 1
      - name: NodeResourcesFit
        weight: 1
`, p.scheduler)
	if err := os.WriteFile(p.schedulerConfig, []byte(sched), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p.schedulerConfig, err)
	}
	var b strings.Builder
	b.WriteString(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: 16
  nodePlayStageParallelism: 4
`)
	entries, err := stages.ReadDir("stages")
	if err != nil {
		return fmt.Errorf("reading embedded stages: %w", err)
	}
	for _, e := range entries {
		data, err := stages.ReadFile("stages/" + e.Name())
		if err != nil {
			return fmt.Errorf("reading embedded stage %s: %w", e.Name(), err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	if err := os.WriteFile(p.kwokConfig, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p.kwokConfig, err)
	}
	return nil
}

func etcdArgs(dir string, pt ports) []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", pt.etcd)
	peer := fmt.Sprintf("http://127.0.0.1:%d", pt.etcdPeer)
	return []string{
		"--name=sandbox", "--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=sandbox=" + peer,
		"--unsafe-no-fsync", "--log-level=warn",
	}
}

func apiserverArgs(p paths, pt ports) []string {
	return []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", pt.etcd),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", pt.apiserver),
		"--tls-cert-file=" + p.servingCert, "--tls-private-key-file=" + p.servingKey,
		"--client-ca-file=" + p.ca,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.saPub, "--service-account-signing-key-file=" + p.saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--endpoint-reconciler-type=none",
		// On EKS the node lifecycle controller lifts the not-ready taint
		// this plugin sets at registration; it does not run here.
		"--disable-admission-plugins=TaintNodesByCondition",
		"--allow-privileged=true", "--profiling=false",
		// Namespace deletion of a benchmark's thousand pods, in parallel.
		"--delete-collection-workers=8",
	}
}

// servingArgs are the secure-serving flags kube-controller-manager and
// kube-scheduler share; their /healthz is how readiness is awaited.
func servingArgs(p paths, kubeconfig string, port int) []string {
	return []string{
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + p.servingCert, "--tls-private-key-file=" + p.servingKey,
		"--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig,
		// The API server has no front proxy: trust client certificates from
		// our CA directly instead of looking the bundles up in-cluster.
		"--authentication-skip-lookup", "--client-ca-file=" + p.ca,
	}
}

func kcmArgs(p paths, pt ports) []string {
	return append(servingArgs(p, p.kcm, pt.kcm),
		"--kubeconfig="+p.kcm,
		"--leader-elect=false",
		"--controllers="+strings.Join(controllers, ","),
		"--root-ca-file="+p.ca,
		"--kube-api-qps=500", "--kube-api-burst=1000",
		"--profiling=false",
	)
}

func schedulerArgs(p paths, pt ports) []string {
	return append(servingArgs(p, p.scheduler, pt.scheduler), "--config="+p.schedulerConfig, "--profiling=false")
}

func kwokArgs(p paths, pt ports) []string {
	return []string{
		"--kubeconfig=" + p.kwok, "-c", p.kwokConfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
		fmt.Sprintf("--server-address=127.0.0.1:%d", pt.kwok),
		// Wide enough for benchmarks with a thousand pods.
		"--cidr=10.128.0.0/16",
	}
}
