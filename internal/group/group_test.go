package group

import (
	"testing"

	"github.com/drainpipe/drainpipe/internal/drain"
)

func TestSlots(t *testing.T) {
	for _, tt := range []struct {
		limit Limit
		size  int
		want  int
	}{
		{Limit{N: 2}, 0, 2},
		{Limit{N: 2}, 50, 2},
		{Limit{Percent: 25}, 6, 2}, // 1.5 rounds up
		{Limit{Percent: 10}, 3, 1}, // 0.3 rounds up to 1
		{Limit{Percent: 50}, 0, 1}, // size unknown: one at a time
		{Limit{Percent: 100}, 500, MaxSlots},
		{Limit{N: 1000}, 0, MaxSlots},
	} {
		if got := tt.limit.Slots(tt.size); got != tt.want {
			t.Errorf("%s of %d nodes: %d slots, want %d", tt.limit, tt.size, got, tt.want)
		}
	}
	if !(Limit{}).Off() || (Limit{N: 1}).Off() || (Limit{Percent: 5}).Off() {
		t.Error("only the zero Limit is off")
	}
	if New(Config{}, nil) != nil {
		t.Error("New with the limit off: want nil (no limit)")
	}
}

func TestOf(t *testing.T) {
	const key = "example.com/pool"
	for _, tt := range []struct {
		name   string
		asg    string
		labels map[string]string
		want   Group
		ok     bool
	}{
		{"auto scaling group, counted by the operator's label", "web", map[string]string{key: "a", drain.NodeGroupLabel: "ng"},
			Group{Name: "asg/web", Selector: key + "=a"}, true},
		{"auto scaling group, counted as a managed node group", "web", map[string]string{drain.NodeGroupLabel: "ng"},
			Group{Name: "asg/web", Selector: drain.NodeGroupLabel + "=ng"}, true},
		{"auto scaling group, nothing to count it by", "web", nil, Group{Name: "asg/web"}, true},
		{"karpenter node pool", "", map[string]string{drain.KarpenterNodePoolLabel: "default", key: "a"},
			Group{Name: "nodepool/default", Selector: drain.KarpenterNodePoolLabel + "=default"}, true},
		{"operator's label", "", map[string]string{key: "a"}, Group{Name: "label/" + key + "=a", Selector: key + "=a"}, true},
		{"no group", "", map[string]string{drain.NodeGroupLabel: "ng"}, Group{}, false},
	} {
		got, ok := Of(tt.asg, tt.labels, key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: Of = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := Of("", map[string]string{"": "x"}, ""); ok {
		t.Error("an unset label key names no group")
	}
}

func TestSlotNames(t *testing.T) {
	g := Group{Name: "asg/" + string(make([]byte, 255))}
	name := g.SlotName(99)
	if len(name) > 63 {
		t.Errorf("slot name %q is longer than a DNS label", name)
	}
	if i, ok := slotIndex(g, name); !ok || i != 99 {
		t.Errorf("slotIndex(%q) = %d, %v; want 99", name, i, ok)
	}
	if _, ok := slotIndex(Group{Name: "asg/other"}, name); ok {
		t.Error("another group's slot read as this group's")
	}
}
