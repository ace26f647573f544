package instance
import ("testing";"fmt";"time";"net/http";"github.com/drainpipe/drainpipe/test/awsfake";"github.com/aws/aws-sdk-go-v2/aws";"github.com/aws/aws-sdk-go-v2/aws/retry";"github.com/aws/aws-sdk-go-v2/service/ec2")
func TestDbg(t *testing.T){
  for _, hc := range []aws.HTTPClient{ http.DefaultClient, nil, http.DefaultClient, nil } {
	fake := awsfake.New(); defer fake.Close()
	cfg := fake.Config(); if hc != nil { cfg.HTTPClient = hc }
	fails := 0
	var last error
	cfg.Retryer = func() aws.Retryer { return retry.NewStandard(func(o *retry.StandardOptions){ o.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary { fails++; last = err; return aws.UnknownTernary })}, o.Retryables...) }) }
	r, _ := NewRouter([]string{"blue"}, "")
	l := NewLookup(ec2.NewFromConfig(cfg), r)
	var ids []string
	for i := range 200 { id := fmt.Sprintf("i-%017x", i); ids = append(ids, id); fake.AddInstances(awsfake.Instance{ID: id}) }
	start := time.Now(); for range 50 { l.Describe(ctx(t), ids) }
	t.Log(hc != nil, fails, time.Since(start), last)
  }
}
