package stack

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// TestConstructTwiceInOneStack embeds the construct twice beside a queue of
// the caller's own: every resource and output of both is there, and no
// physical name is used twice (a clash CloudFormation would refuse only at
// deploy time).
func TestConstructTwiceInOneStack(t *testing.T) {
	s := awscdk.NewStack(awscdk.NewApp(nil), jsii.String("Platform"), nil)
	awssqs.NewQueue(s, jsii.String("Queue"), &awssqs.QueueProps{QueueName: jsii.String("Platform-queue")})
	var built []*Construct
	for _, id := range []string{"Blue", "Green"} {
		c, err := NewConstruct(s, id, testProps(t))
		if err != nil {
			t.Fatalf("NewConstruct(%s): %v", id, err)
		}
		built = append(built, c)
	}
	// The exposed resources are wired, e.g. a caller's own rule target.
	if built[0].Queue == nil || built[0].Function == nil || built[0].AlarmTopic == nil || built[0].DeadLetterQueue == nil {
		t.Fatalf("construct does not expose its queue, dead-letter queue, function and alarm topic")
	}
	raw, err := json.Marshal(assertions.Template_FromStack(s, nil).ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Resources map[string]resource
		Outputs   map[string]any
	}
	if err := json.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	alone := synth(t, testProps(t))
	if got, want := len(tpl.Resources), 2*len(alone.Resources)+1; got != want {
		t.Errorf("stack has %d resources, want %d (twice the stack's %d and the caller's queue)", got, want, len(alone.Resources))
	}
	if got, want := len(tpl.Outputs), 2*len(alone.Outputs); got != want {
		t.Errorf("stack has %d outputs, want %d", got, want)
	}
	names := map[string]string{}
	for id, r := range tpl.Resources {
		// The property naming the resource itself (an event source
		// mapping's FunctionName names the function it invokes).
		k := physicalName[r.Type]
		if v, ok := r.Properties[k]; ok {
			key := fmt.Sprintf("%s %s %v", r.Type, k, v)
			if other, ok := names[key]; ok {
				t.Errorf("%s and %s both set %s", other, id, key)
			}
			names[key] = id
		}
	}
	for _, want := range []string{"Platform-queue", "Platform-Blue-queue", "Platform-Green-queue", "Platform-Blue-cordon", "Platform-Green-cordon"} {
		if _, ok := names["AWS::SQS::Queue QueueName "+want]; !ok {
			t.Errorf("no queue named %s; names: %v", want, names)
		}
	}
}
