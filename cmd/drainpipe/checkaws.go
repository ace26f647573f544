package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/drainpipe/drainpipe/internal/preflight"
)

// listGroups reads every Auto Scaling group of the account and region
// with the hooks of those the report covers (Stack.Relevant). Auto
// Scaling cannot filter by name prefix, nor by "any of these tags", so
// the groups are listed whole and chosen here.
func listGroups(ctx context.Context, cfg aws.Config, s preflight.Stack) ([]preflight.ASG, error) {
	client := autoscaling.NewFromConfig(cfg)
	var groups []preflight.ASG
	pages := autoscaling.NewDescribeAutoScalingGroupsPaginator(client, &autoscaling.DescribeAutoScalingGroupsInput{MaxRecords: aws.Int32(100)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing Auto Scaling groups: %w", err)
		}
		for _, g := range page.AutoScalingGroups {
			asg := preflight.ASG{Name: aws.ToString(g.AutoScalingGroupName), Tags: map[string]string{}}
			for _, t := range g.Tags {
				asg.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			if s.Relevant(asg) {
				groups = append(groups, asg)
			}
		}
	}
	for i := range groups {
		out, err := client.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: aws.String(groups[i].Name)})
		if err != nil {
			return nil, fmt.Errorf("reading the lifecycle hooks of %s: %w", groups[i].Name, err)
		}
		for _, h := range out.LifecycleHooks {
			groups[i].Hooks = append(groups[i].Hooks, preflight.Hook{Name: aws.ToString(h.LifecycleHookName),
				Transition: aws.ToString(h.LifecycleTransition), Target: aws.ToString(h.NotificationTargetARN),
				DefaultResult: aws.ToString(h.DefaultResult)})
		}
	}
	return groups, nil
}

// accessEntry reads the role's access entry on a cluster and, when there
// is none, the cluster's authentication mode. username is the entry's
// Kubernetes username, for the access reviews ("" when unknown).
func accessEntry(ctx context.Context, client *awseks.Client, cluster, role string) (c preflight.Check, username string) {
	if role == "" {
		return preflight.Check{Cluster: cluster, What: "access entry", Status: preflight.Unknown,
			Detail: "the function's role is not known: give --stack or --role-arn"}, ""
	}
	out, err := client.DescribeAccessEntry(ctx, &awseks.DescribeAccessEntryInput{ClusterName: aws.String(cluster), PrincipalArn: aws.String(role)})
	var notFound *ekstypes.ResourceNotFoundException
	switch {
	case err == nil:
		e := out.AccessEntry
		return preflight.JudgeAccessEntry(cluster, role, preflight.AccessEntry{Found: true, Groups: e.KubernetesGroups}), aws.ToString(e.Username)
	case !errors.As(err, &notFound):
		return preflight.Check{Cluster: cluster, What: "access entry", Status: preflight.Unknown,
			Detail: fmt.Sprintf("eks:DescribeAccessEntry: %v", err)}, ""
	}
	entry := preflight.AccessEntry{}
	if d, err := client.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String(cluster)}); err != nil {
		return preflight.Check{Cluster: cluster, What: "access entry", Status: preflight.Unknown,
			Detail: fmt.Sprintf("eks:DescribeCluster: %v", err)}, ""
	} else if d.Cluster.AccessConfig != nil {
		entry.AuthMode = string(d.Cluster.AccessConfig.AuthenticationMode)
	}
	return preflight.JudgeAccessEntry(cluster, role, entry), ""
}

// alarmTopic reads the alarm topic's subscriptions.
func alarmTopic(ctx context.Context, cfg aws.Config, topic string) preflight.Check {
	if topic == "" {
		return preflight.Check{What: "alarm topic", Status: preflight.Unknown,
			Detail: "no topic known: the stack outputs AlarmTopicArn only for the topic it made (alarmTopicArn given?): pass --topic-arn"}
	}
	var subs []preflight.Subscription
	pages := sns.NewListSubscriptionsByTopicPaginator(sns.NewFromConfig(cfg), &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return preflight.Check{What: "alarm topic", Status: preflight.Unknown, Detail: fmt.Sprintf("sns:ListSubscriptionsByTopic: %v", err)}
		}
		for _, s := range page.Subscriptions {
			subs = append(subs, preflight.Subscription{Protocol: aws.ToString(s.Protocol), Endpoint: aws.ToString(s.Endpoint),
				Pending: aws.ToString(s.SubscriptionArn) == "PendingConfirmation"})
		}
	}
	return preflight.JudgeTopic(topic, subs)
}
