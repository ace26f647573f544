package pipeline

import "context"

// warmMax bounds the clusters whose clients a batch builds before it
// knows it needs them: each costs a DescribeCluster in EKS mode, and a
// wave's cold environments all start at once.
const warmMax = 3

// warm builds the configured clusters' clients while the batch's
// instances are described. In EKS mode a cold environment's first client
// needs a DescribeCluster (its endpoint and CA), which otherwise came
// after DescribeInstances, one more round trip before the first cordon.
// It does not wait: a task asking for a client being built waits for it,
// and a failed build is not kept, so that task tries again and reports.
func (a *Actor) warm(ctx context.Context) {
	if len(a.cfg.Clusters) > warmMax {
		return
	}
	for _, name := range a.cfg.Clusters {
		go func() {
			if _, err := a.clusters.Client(ctx, name); err != nil {
				a.log.Debug("building the cluster's client ahead of its tasks", "cluster", name, "error", err.Error())
			}
		}()
	}
}
