package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
)

// ApplyAdmissionPolicies creates deploy/admission-policy.yaml's policies
// and bindings (those already there are left as they are).
func ApplyAdmissionPolicies(ctx context.Context, c kubernetes.Interface, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	api := c.AdmissionregistrationV1()
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("decoding %s: %w", path, err)
		}
		var meta metav1.TypeMeta
		if err := json.Unmarshal(raw, &meta); err != nil {
			return fmt.Errorf("decoding %s: %w", path, err)
		}
		switch meta.Kind {
		case "ValidatingAdmissionPolicy":
			var p admissionv1.ValidatingAdmissionPolicy
			if err = json.Unmarshal(raw, &p); err == nil {
				_, err = api.ValidatingAdmissionPolicies().Create(ctx, &p, metav1.CreateOptions{})
			}
		case "ValidatingAdmissionPolicyBinding":
			var b admissionv1.ValidatingAdmissionPolicyBinding
			if err = json.Unmarshal(raw, &b); err == nil {
				_, err = api.ValidatingAdmissionPolicyBindings().Create(ctx, &b, metav1.CreateOptions{})
			}
		default:
			err = fmt.Errorf("unexpected kind %q", meta.Kind)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("applying %s: %s: %w", path, meta.Kind, err)
		}
	}
}
