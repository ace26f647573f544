package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/preflight"
)

// rbacCheck asks the cluster's authorizer, one SubjectAccessReview per
// permission, whether group drainpipe may do what deploy/rbac.yaml grants.
// A review of the group, not a SelfSubjectAccessReview: the command runs
// as the operator, whose own rights say nothing of the function's. It
// needs the operator to be allowed to create SubjectAccessReviews.
func rbacCheck(ctx context.Context, k kubernetes.Interface, cluster, username string) preflight.Check {
	if username == "" {
		username = "drainpipe-check" // RBAC binds the group; the name only labels the review
	}
	var denied []preflight.Permission
	for _, p := range preflight.Permissions() {
		sar, err := k.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User: username, Groups: []string{preflight.Group, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: p.Namespace, Verb: p.Verb,
					Group: p.APIGroup, Resource: p.Resource, Subresource: p.Subresource},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return preflight.Check{Cluster: cluster, What: "rbac", Status: preflight.Unknown,
				Detail: fmt.Sprintf("creating a SubjectAccessReview (create subjectaccessreviews.authorization.k8s.io is needed): %v", err)}
		}
		if !sar.Status.Allowed {
			denied = append(denied, p)
		}
	}
	return preflight.JudgeRBAC(cluster, denied)
}

// flowControlCheck reads deploy/flowcontrol.yaml's FlowSchemas and
// priority levels from the cluster.
func flowControlCheck(ctx context.Context, k kubernetes.Interface, cluster string) preflight.Check {
	unknown := func(err error) preflight.Check {
		detail := fmt.Sprintf("reading flow control: %v", err)
		if apierrors.IsNotFound(err) {
			detail = "the cluster serves no flowcontrol.apiserver.k8s.io/v1 (Kubernetes 1.29+): " + detail
		}
		return preflight.Check{Cluster: cluster, What: "flowcontrol", Status: preflight.Unknown, Detail: detail}
	}
	api := k.FlowcontrolV1()
	schemas := map[string]preflight.FlowSchema{}
	var levels []string
	for name, level := range preflight.WantFlowSchemas() {
		fs, err := api.FlowSchemas().Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			got := preflight.FlowSchema{Name: name, PriorityLevel: fs.Spec.PriorityLevelConfiguration.Name}
			for _, r := range fs.Spec.Rules {
				for _, s := range r.Subjects {
					if s.Group != nil {
						got.Groups = append(got.Groups, s.Group.Name)
					}
				}
			}
			schemas[name] = got
		case !objectMissing(err):
			return unknown(err)
		}
		_, err = api.PriorityLevelConfigurations().Get(ctx, level, metav1.GetOptions{})
		switch {
		case err == nil:
			levels = append(levels, level)
		case !objectMissing(err):
			return unknown(err)
		}
	}
	return preflight.JudgeFlowControl(cluster, schemas, levels)
}

// admissionCheck reads deploy/admission-policy.yaml's policies and their
// bindings from the cluster: applied, bound (Deny) and of version.
func admissionCheck(ctx context.Context, k kubernetes.Interface, cluster, version, versionOf string) preflight.Check {
	api := k.AdmissionregistrationV1()
	found := map[string]preflight.Policy{}
	for _, name := range preflight.WantPolicies() {
		p, err := api.ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
		if objectMissing(err) {
			continue
		}
		if err != nil {
			return preflight.Check{Cluster: cluster, What: "admission policies", Status: preflight.Unknown,
				Detail: fmt.Sprintf("reading ValidatingAdmissionPolicy %s (admissionregistration.k8s.io/v1, Kubernetes 1.30+): %v", name, err)}
		}
		got := preflight.Policy{Version: p.Labels[preflight.VersionLabel]}
		b, err := api.ValidatingAdmissionPolicyBindings().Get(ctx, name, metav1.GetOptions{})
		if err != nil && !objectMissing(err) {
			return preflight.Check{Cluster: cluster, What: "admission policies", Status: preflight.Unknown,
				Detail: fmt.Sprintf("reading ValidatingAdmissionPolicyBinding %s: %v", name, err)}
		}
		got.Bound = err == nil && b.Spec.PolicyName == name && slices.Contains(b.Spec.ValidationActions, admissionv1.Deny)
		found[name] = got
	}
	return preflight.JudgeAdmission(cluster, found, version, versionOf)
}

// objectMissing tells an object that does not exist (404 naming it) from
// an API the server does not serve (a 404 naming nothing).
func objectMissing(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Name != ""
}
