package pipeline

import (
	"testing"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/group"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// A node is cordoned unread only on a first delivery for a running
// instance whose node name and zone are known, with nothing to check
// first (a dry run, a group limit, a scheduled change's record).
func TestUnreadable(t *testing.T) {
	spot := event.Interruption{Kind: event.KindSpotInterruption}
	for _, tt := range []struct {
		name    string
		dryRun  bool
		groups  *group.Limiter
		receive int
		inst    func(*instance.Instance)
		p       event.Interruption
		want    bool
	}{
		{"first delivery", false, nil, 1, nil, spot, true},
		{"no receive count", false, nil, 0, nil, spot, true},
		{"redelivery", false, nil, 2, nil, spot, false},
		{"dry run", true, nil, 1, nil, spot, false},
		{"group limit", false, &group.Limiter{}, 1, nil, spot, false},
		{"stopping", false, nil, 1, func(i *instance.Instance) { i.State = "stopping" }, spot, false},
		{"no node name", false, nil, 1, func(i *instance.Instance) { i.PrivateDNSName = "" }, spot, false},
		{"no zone", false, nil, 1, func(i *instance.Instance) { i.AvailabilityZone = "" }, spot, false},
		{"scheduled change", false, nil, 1, nil, event.Interruption{Kind: event.KindScheduledChange}, false},
	} {
		inst := ourInstance()
		if tt.inst != nil {
			tt.inst(&inst)
		}
		a := &Actor{cfg: Config{DryRun: tt.dryRun}, groups: tt.groups}
		if got := a.unreadable(handler.Task{ReceiveCount: tt.receive}, tt.p, inst); got != tt.want {
			t.Errorf("%s: unreadable = %v, want %v", tt.name, got, tt.want)
		}
	}
}
