package stack

import (
	"reflect"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Actions holds the action per event kind: none, cordon or cordon-and-drain;
// empty keeps the function's default. Each field's kind tag names its row
// in the kinds table (event.Table), which gives its context key and
// variable; TestActionsCoverEveryKind fails when a kind lacks its field.
type Actions struct {
	Spot                string `kind:"spot-interruption"`
	Rebalance           string `kind:"rebalance-recommendation"`
	StateChange         string `kind:"state-change"`
	ScheduledChange     string `kind:"scheduled-change"`
	ASGLifecycle        string `kind:"asg-lifecycle"`
	CapacityReservation string `kind:"capacity-reservation-interruption"`
	CapacityBlock       string `kind:"capacity-block-expiry"`
}

// field is the action of kind k; nil when Actions has no field for it.
func (a *Actions) field(k event.Kind) *string {
	v := reflect.ValueOf(a).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("kind") == string(k) {
			return v.Field(i).Addr().Interface().(*string)
		}
	}
	return nil
}

// actionField ties an action to its context key and environment variable.
type actionField struct{ key, env, value string }

// fields lists every kind with an action, in the kinds table's order.
func (a Actions) fields() []actionField {
	var out []actionField
	for _, r := range event.Table() {
		if r.Setting == "" {
			continue
		}
		f := actionField{key: r.ContextKey, env: r.Setting}
		if v := a.field(r.Kind); v != nil {
			f.value = *v
		}
		out = append(out, f)
	}
	return out
}
