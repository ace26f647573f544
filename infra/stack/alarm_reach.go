package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// unsubscribedAlarmsWarning is the synth warning's ID, so an operator who
// subscribes the topic another way can acknowledge it
// (Annotations.acknowledgeWarning, or `cdk synth` lists it each time).
const unsubscribedAlarmsWarning = "drainpipe:alarmsReachNobody"

// warnUnsubscribedAlarms warns at synth when the alarms notify a topic the
// stack creates with nobody subscribed: they fire, and no one hears. A
// topic given as alarmTopicArn is the operator's, subscribers and all.
func warnUnsubscribedAlarms(c *Construct) {
	if c.Props.AlarmTopicARN != "" || c.Props.AlarmEmail != "" {
		return
	}
	awscdk.Annotations_Of(c.Scope).AddWarningV2(jsii.String(unsubscribedAlarmsWarning), jsii.String(
		"Drainpipe's alarms notify a new SNS topic with no subscriber, so they reach nobody: set context alarmEmail "+
			"(an address to subscribe), or alarmTopicArn (a topic you already watch), or subscribe to the output AlarmTopicArn after deploying"))
}
