package event

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks Parse's promises on any input: no panic, every error a
// rejection, and every accepted interruption well formed.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed corpus in testdata: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(sns(directHook)))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := Parse(body)
		if err != nil {
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("error %v is not a rejection", err)
			}
			return
		}
		if (len(got.Interruptions) == 0) == (got.IgnoreReason == "") {
			t.Fatalf("Parse = %+v: want interruptions or an ignore reason, not both or neither", got)
		}
		for _, in := range got.Interruptions {
			// A capacity-block-expiry names its reservation, not instances.
			if in.Kind == "" || (in.Kind != KindSweep && (len(in.Instances) == 0) == (in.Reservation == "")) {
				t.Fatalf("incomplete interruption %+v", in)
			}
			for _, id := range in.Instances {
				if !ValidInstanceID(id) {
					t.Fatalf("accepted malformed instance ID %q", id)
				}
			}
			if (in.Kind == KindASGLifecycle || in.Kind == KindASGLaunchLifecycle) != (in.Lifecycle != nil) {
				t.Fatalf("lifecycle set wrongly on %+v", in)
			}
			if in.Lifecycle != nil && (in.Lifecycle.Token == "" || in.Lifecycle.Hook == "" || in.Lifecycle.ASG == "") {
				t.Fatalf("incomplete lifecycle %+v", in.Lifecycle)
			}
		}
	})
}
