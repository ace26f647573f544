package stack

import (
	"regexp"
	"strings"
)

// hookName is Auto Scaling's constraint on lifecycle hook names.
var hookName = regexp.MustCompile(`^[A-Za-z0-9_/-]{1,255}$`)

// defaultHookNames are the lifecycle hook names the docs tell operators to
// use: drainpipe for the terminate hook, drainpipe-launch for a launch hook.
func defaultHookNames() []string { return []string{"drainpipe", "drainpipe-launch"} }

// hookNameEnv tells the function which hooks of its groups it owns
// (DRAINPIPE_LIFECYCLE_HOOK_NAMES), when it serves groups at all.
func (p Props) hookNameEnv(env map[string]string) {
	if len(p.LifecycleHookNames) > 0 && (len(p.ASGNames) > 0 || p.ASGNamePrefix != "") {
		env["DRAINPIPE_LIFECYCLE_HOOK_NAMES"] = strings.Join(p.LifecycleHookNames, ",")
	}
}

// hookDetail is a lifecycle rule's detail pattern: the served groups and,
// when set, only the hooks the function owns.
func hookDetail(p Props, groups []any) *map[string]any {
	d := map[string]any{"AutoScalingGroupName": groups}
	if len(p.LifecycleHookNames) > 0 {
		d["LifecycleHookName"] = p.LifecycleHookNames
	}
	return &d
}
