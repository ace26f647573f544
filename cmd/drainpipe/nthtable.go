package main

import (
	_ "embed"
	"fmt"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/drainpipe/drainpipe/internal/event"
)

// nthChart is the chart's values file: its top-level values and their
// defaults.
//
//go:embed nthchart.yaml
var nthChart []byte

// nthDefaults are the chart's values with their defaults, as YAML decodes
// them.
func nthDefaults() (map[string]any, error) {
	var out map[string]any
	if err := yaml.Unmarshal(nthChart, &out); err != nil {
		return nil, fmt.Errorf("reading the chart's embedded values: %w", err)
	}
	return out, nil
}

// nthRule carries one value (v: the file's, else the chart's default)
// into res.
type nthRule func(res *nthResult, key string, v any)

// Reasons shared by several values.
const (
	whyNoPod     = "no pod: Drainpipe runs as a Lambda function the stack deploys"
	whyIMDS      = "IMDS mode only: no effect in queue-processor mode, which Drainpipe replaces"
	whyTesting   = "for testing NTH itself"
	whyAlwaysLog = "Drainpipe's logs are always JSON lines (log/slog), one per record and per drain"
)

// onlyNote reports the value as not carried when it is not the chart's
// default: a release's full values (helm get values -a) list only what
// was changed.
func onlyNote(why string) nthRule {
	return func(res *nthResult, key string, v any) {
		if fmt.Sprint(v) != fmt.Sprint(res.defaults[key]) {
			res.gap(key, v, why)
		}
	}
}

// envIf sets a DRAINPIPE_ variable to value when the value is not want.
func envIf(name string, want any, value string) nthRule {
	return func(res *nthResult, _ string, v any) {
		if fmt.Sprint(v) != fmt.Sprint(want) {
			res.env(name, value)
		}
	}
}

// gapIf reports the value as not carried when it is not want (the value
// Drainpipe's behaviour matches).
func gapIf(want any, why string) nthRule {
	return func(res *nthResult, key string, v any) {
		if fmt.Sprint(v) != fmt.Sprint(want) {
			res.gap(key, v, why)
		}
	}
}

func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case string:
		f, _ := strconv.ParseFloat(n, 64)
		return f
	}
	return 0
}

// drainpipeActions are the stack's context keys of every kind's action.
var drainpipeActions = actionKeys()

func actionKeys() []string {
	var keys []string
	for _, k := range event.Kinds() {
		keys = append(keys, actionKey(k))
	}
	return keys
}

// actionKey is the stack's context key of kind k's action.
func actionKey(k event.Kind) string {
	info, _ := event.Info(k)
	return info.ContextKey
}

// nthRules maps every value of the chart to its rule.
func nthRules() map[string]nthRule {
	rules := map[string]nthRule{
		"dryRun": func(res *nthResult, _ string, v any) {
			if fmt.Sprint(v) == "true" {
				res.Context["dryRun"] = true
			}
		},
		"cordonOnly": func(res *nthResult, _ string, v any) {
			if fmt.Sprint(v) == "true" {
				for _, a := range drainpipeActions {
					res.Context[a] = "cordon"
				}
				return
			}
			// NTH's queue processor drains on a rebalance recommendation;
			// Drainpipe only cordons by default.
			res.Context[actionKey(event.KindRebalanceRecommendation)] = "cordon-and-drain"
		},
		"taintNode": gapIf(true, "Drainpipe always taints the nodes it takes out of service (drainpipe.dev/interruption): "+
			"the taint keeps off pods that tolerate a cordon; the mildest is env DRAINPIPE_TAINT_EFFECT=PreferNoSchedule"),
		"enableOutOfServiceTaint":  envIf("DRAINPIPE_OUT_OF_SERVICE", true, "false"),
		"excludeFromLoadBalancers": envIf("DRAINPIPE_EXCLUDE_FROM_LB", true, "false"),
		"deleteLocalData":          gapIf(true, "Drainpipe evicts pods with emptyDir volumes: their data goes with the instance anyway"),
		"ignoreDaemonSets":         gapIf(true, "Drainpipe never evicts DaemonSet pods: their controller would put them straight back"),
		"podTerminationGracePeriod": func(res *nthResult, _ string, v any) {
			// NTH's 0 deletes at once; Drainpipe's shortest grace is 1 s.
			if n := number(v); n >= 0 {
				res.env("DRAINPIPE_POD_GRACE_CAP", fmt.Sprintf("%ds", max(1, int(n))))
			}
		},
		"nodeTerminationGracePeriod": onlyNote("each notice's own deadline (Spot: 2 minutes, a scheduled change's start, " +
			"a stop's shutdown) bounds the drain, less DRAINPIPE_SAFETY_MARGIN"),
		"emitKubernetesEvents": envIf("DRAINPIPE_KUBE_EVENTS", true, "false"),
		"completeLifecycleActionDelaySeconds": func(res *nthResult, key string, v any) {
			if number(v) >= 0 {
				res.gap(key, v, "Drainpipe completes a lifecycle action once the node is empty (pods gone, not just evicted); "+
					"a fixed pause is not offered (see docs/migrating-from-nth.md)")
			}
		},
		"kubernetesEventsExtraAnnotations": gapIf("", "Drainpipe's events carry no extra annotations"),
		"webhookURL": gapIf("", "a webhook URL is a credential: put it in a Secrets Manager secret or SSM SecureString "+
			"and pass its ARN as context webhookSecretArn"),
		"webhookURLSecretName":         gapIf("", "copy the Secret's webhookurl into Secrets Manager or SSM and pass its ARN as context webhookSecretArn"),
		"webhookHeaders":               nthWebhookEnv("DRAINPIPE_WEBHOOK_HEADERS", parseHeaders),
		"webhookProxy":                 gapIf("", "the function reaches the webhook directly (from a VPC: through its NAT or endpoints)"),
		"webhookTemplate":              nthWebhookEnv("DRAINPIPE_WEBHOOK_TEMPLATE", parseTemplate),
		"webhookTemplateConfigMapName": gapIf("", "copy the ConfigMap's template into DRAINPIPE_WEBHOOK_TEMPLATE"),
		"webhookTemplateConfigMapKey":  gapIf("", "copy the ConfigMap's template into DRAINPIPE_WEBHOOK_TEMPLATE"),
		"enableSqsTerminationDraining": gapIf(true, "this release runs in IMDS mode; Drainpipe replaces queue-processor mode "+
			"(it handles the same notices from EventBridge, with no agent on the nodes)"),
		"awsRegion": gapIf("", "deploy the stack in that region: one stack per account and region"),
		"queueURL":  gapIf("", "the stack creates its own queue and rules; retire NTH's after the cutover"),
		"workers": func(res *nthResult, _ string, v any) {
			if n := number(v); n != 10 && n > 0 {
				res.env("DRAINPIPE_RECORD_CONCURRENCY", strconv.Itoa(int(n)))
			}
		},
		"checkTagBeforeDraining": func(res *nthResult, _ string, v any) {
			if fmt.Sprint(v) == "true" {
				res.Context["requiredTag"] = res.managedTag
			}
		},
		"managedTag":                func(*nthResult, string, any) {}, // read with checkTagBeforeDraining
		"checkASGTagBeforeDraining": onlyNote("deprecated in NTH for checkTagBeforeDraining, which is carried as requiredTag"),
		"managedAsgTag":             onlyNote("deprecated in NTH for managedTag, which is carried as requiredTag"),
		"useProviderId":             func(*nthResult, string, any) {}, // Drainpipe matches nodes by provider ID anyway
		"heartbeatInterval": gapIf(-1, "Drainpipe heartbeats every third of the hook's own heartbeat timeout, at most "+
			"DRAINPIPE_HEARTBEAT_CAP (25 s) apart"),
		"heartbeatUntil": nthHeartbeatUntil,
		"sqsMsgVisibilityTimeoutSec": onlyNote("Lambda's event source mapping holds the messages; a retried one comes back " +
			"after context retryDelaySeconds"),
		"deleteSqsMsgIfNodeNotFound": gapIf(true, "Drainpipe deletes a message whose instance has no node in its clusters, "+
			"logging why (NTH keeps it by default until it expires)"),
		"logLevel": func(res *nthResult, _ string, v any) {
			if s := fmt.Sprint(v); s != "info" {
				res.env("DRAINPIPE_LOG_LEVEL", s)
			}
		},
		"logFormatVersion":       onlyNote(whyAlwaysLog),
		"jsonLogging":            onlyNote(whyAlwaysLog),
		"enablePrometheusServer": gapIf(false, "metrics are CloudWatch embedded-format documents in the logs (DRAINPIPE_METRICS), namespace Drainpipe"),
		"prometheusServerPort":   onlyNote("metrics are CloudWatch embedded-format documents in the logs"),
		"extraEnv":               nthExtraEnv,
		"rbac":                   onlyNote("the stack maps the function's role to group drainpipe; deploy/ holds its RBAC"),
	}
	for _, k := range []string{"image", "nameOverride", "fullnameOverride", "serviceAccount", "customLabels", "podLabels",
		"podAnnotations", "podSecurityContext", "securityContext", "terminationGracePeriodSeconds", "resources",
		"nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "probes", "replicas", "strategy",
		"podDisruptionBudget", "serviceMonitor", "priorityClassName", "enableProbesServer"} {
		rules[k] = onlyNote(whyNoPod)
	}
	for _, k := range []string{"targetNodeOs", "linuxPodLabels", "windowsPodLabels", "linuxPodAnnotations",
		"windowsPodAnnotations", "updateStrategy", "daemonsetPriorityClassName", "podMonitor", "useHostNetwork", "dnsPolicy",
		"dnsConfig", "linuxDnsPolicy", "windowsDnsPolicy", "daemonsetNodeSelector", "linuxNodeSelector", "windowsNodeSelector",
		"daemonsetAffinity", "linuxAffinity", "windowsAffinity", "daemonsetTolerations", "linuxTolerations",
		"windowsTolerations", "metadataTries", "enableSpotInterruptionDraining", "enableASGLifecycleDraining",
		"enableScheduledEventDraining", "enableRebalanceMonitoring", "enableRebalanceDraining"} {
		rules[k] = onlyNote(whyIMDS)
	}
	for _, k := range []string{"awsEndpoint", "awsAccessKeyID", "awsSecretAccessKey", "instanceMetadataURL", "procUptimeFile"} {
		rules[k] = onlyNote(whyTesting)
	}
	return rules
}
