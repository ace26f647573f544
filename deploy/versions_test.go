package deploy_test

import (
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/drainpipe/drainpipe/internal/preflight"
)

// TestManifestsVersioned: every object the manifests install carries the
// version in internal/version/VERSION (the release they belong to), and
// `drainpipe check` compares each with the deployed function's: the
// admission policies in its admission finding, all others in its versions
// finding (preflight.VersionedObjects).
func TestManifestsVersioned(t *testing.T) {
	b, err := os.ReadFile("../internal/version/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(b))
	var objects []preflight.Object
	for _, file := range []string{"rbac.yaml", "flowcontrol.yaml", "admission-policy.yaml"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			var obj struct {
				metav1.TypeMeta   `json:",inline"`
				metav1.ObjectMeta `json:"metadata"`
			}
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			o := preflight.Object{Manifest: "deploy/" + file, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name}
			if got := obj.Labels[preflight.VersionLabel]; got != want {
				t.Errorf("%s: label %s = %q, want %q (internal/version/VERSION)", o, preflight.VersionLabel, got, want)
			}
			if o.Kind != "ValidatingAdmissionPolicy" {
				objects = append(objects, o)
			} else if !slices.Contains(preflight.WantPolicies(), o.Name) {
				t.Errorf("%s: not in preflight.WantPolicies, so no finding compares its version", o)
			}
		}
		f.Close()
	}
	if !slices.Equal(objects, preflight.VersionedObjects()) {
		t.Errorf("the manifests' objects (admission policies aside)\n%v\npreflight.VersionedObjects\n%v", objects, preflight.VersionedObjects())
	}
}
