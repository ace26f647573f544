// Command construct is a platform team's own CDK app embedding Drainpipe:
// a stack of theirs holding a resource of their own and Drainpipe's
// construct, wired to it. `npx cdk synth` here runs it (cdk.json); CI
// builds and synthesizes it (infra's TestConstructExample). See
// docs/deploy.md, "In your own CDK app".
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"

	"github.com/drainpipe/drainpipe/infra/stack"
)

func main() {
	app := awscdk.NewApp(nil)
	err := build(app)
	if err == nil {
		app.Synth(nil)
	}
	jsii.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "construct example:", err)
		os.Exit(1)
	}
}

// build adds the team's stack to app. Context drainpipeAssetDir names the
// directory holding Drainpipe's bootstrap (`make build` writes dist/; a
// release's zip unpacked holds one too); the default is this checkout's.
func build(app awscdk.App) error {
	st := awscdk.NewStack(app, jsii.String("Platform"), nil)
	// The team's own paging topic (Drainpipe's alarms go to its own, with
	// AlarmEmail subscribed).
	oncall := awssns.NewTopic(st, jsii.String("Oncall"), nil)

	p := stack.Defaults()
	p.AssetDir = "../../dist"
	if dir, ok := app.Node().TryGetContext(jsii.String("drainpipeAssetDir")).(string); ok && dir != "" {
		p.AssetDir = dir
	}
	p.Clusters = []string{"prod"}
	p.ASGNamePrefix = "eks-prod-"
	p.Actions.Rebalance = "cordon"
	p.MaxConcurrency = 5
	p.AlarmEmail = "oncall@example.com"
	dp, err := stack.NewConstruct(st, "Drainpipe", p)
	if err != nil {
		return err // every problem with the props at once
	}

	// Wire it further: an alarm of the team's own on Drainpipe's queue,
	// paging their topic when a wave backs up.
	backlog := dp.Queue.MetricApproximateNumberOfMessagesVisible(nil).CreateAlarm(st, jsii.String("DrainpipeBacklog"),
		&awscloudwatch.CreateAlarmOptions{Threshold: jsii.Number(100), EvaluationPeriods: jsii.Number(3)})
	backlog.AddAlarmAction(awscloudwatchactions.NewSnsAction(oncall))
	return nil
}
