package main

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/preflight"
)

// versionsCheck reads the version label of each object deploy/ installs
// (preflight.VersionedObjects) from the cluster: those found must be of
// version.
func versionsCheck(ctx context.Context, k kubernetes.Interface, cluster, version, versionOf string) preflight.Check {
	found := map[preflight.Object]string{}
	for _, o := range preflight.VersionedObjects() {
		labels, err := objectLabels(ctx, k, o)
		if objectMissing(err) {
			continue
		}
		if err != nil {
			return preflight.Check{Cluster: cluster, What: "versions", Status: preflight.Unknown,
				Detail: fmt.Sprintf("reading %s: %v", o, err)}
		}
		found[o] = labels[preflight.VersionLabel]
	}
	return preflight.JudgeVersions(cluster, found, version, versionOf)
}

// objectLabels reads the labels of one object of deploy/, by its kind.
func objectLabels(ctx context.Context, k kubernetes.Interface, o preflight.Object) (map[string]string, error) {
	get := metav1.GetOptions{}
	switch o.Kind {
	case "ClusterRole":
		return labelsOf(k.RbacV1().ClusterRoles().Get(ctx, o.Name, get))
	case "ClusterRoleBinding":
		return labelsOf(k.RbacV1().ClusterRoleBindings().Get(ctx, o.Name, get))
	case "Namespace":
		return labelsOf(k.CoreV1().Namespaces().Get(ctx, o.Name, get))
	case "Role":
		return labelsOf(k.RbacV1().Roles(o.Namespace).Get(ctx, o.Name, get))
	case "RoleBinding":
		return labelsOf(k.RbacV1().RoleBindings(o.Namespace).Get(ctx, o.Name, get))
	case "PriorityLevelConfiguration":
		return labelsOf(k.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, o.Name, get))
	case "FlowSchema":
		return labelsOf(k.FlowcontrolV1().FlowSchemas().Get(ctx, o.Name, get))
	case "ValidatingAdmissionPolicyBinding":
		return labelsOf(k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, o.Name, get))
	}
	return nil, fmt.Errorf("no reader for kind %s", o.Kind)
}

// labelsOf is an object's labels, or the error that read it.
func labelsOf[T metav1.Object](obj T, err error) (map[string]string, error) {
	if err != nil {
		return nil, err
	}
	return obj.GetLabels(), nil
}
