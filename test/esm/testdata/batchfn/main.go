// Command batchfn is a tiny SQS function for the mapping's own tests: a
// record whose body is "fail" is reported as a batch item failure, "hang"
// never answers (the function timeout ends it), anything else is done.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, r := range ev.Records {
			switch r.Body {
			case "fail":
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			case "hang":
				select {} // until the harness kills the process
			}
		}
		return resp, nil
	})
}
