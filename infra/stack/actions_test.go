package stack

import (
	"reflect"
	"testing"

	"github.com/drainpipe/drainpipe/internal/event"
)

// TestActionsCoverEveryKind: Actions, the construct's typed props, has one
// field per kind with a policy action and none for anything else, so a
// kind added to the table cannot go without its context key being read.
func TestActionsCoverEveryKind(t *testing.T) {
	tagged := map[string]int{}
	typ := reflect.TypeFor[Actions]()
	for i := range typ.NumField() {
		tagged[typ.Field(i).Tag.Get("kind")]++
	}
	for _, k := range event.Kinds() {
		if tagged[string(k)] != 1 {
			t.Errorf("kind %s has %d fields in Actions, want one tagged kind:%q", k, tagged[string(k)], k)
		}
		delete(tagged, string(k))
	}
	for tag := range tagged {
		t.Errorf("Actions field tagged kind:%q names no kind with an action", tag)
	}
	var a Actions
	*a.field(event.KindCapacityBlockExpiry) = "none"
	if a.CapacityBlock != "none" {
		t.Errorf("field(capacity-block-expiry) is not CapacityBlock")
	}
}
