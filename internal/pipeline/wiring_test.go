package pipeline

import (
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/eks"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/nodemap"
)

// The real collaborators fit the pipeline's narrow interfaces.
var (
	_ Instances      = (*instance.Lookup)(nil)
	_ router         = (*instance.Lookup)(nil)
	_ Clusters       = (*eks.Clusters)(nil)
	_ Clusters       = (*eks.Local)(nil)
	_ NodeFinder     = nodemap.Find
	_ NodeGetter     = nodemap.Node
	_ Hooks          = (*lifecycle.Client)(nil)
	_ DrainerFactory = func(c kubernetes.Interface) Drainer { return drain.New(c, drain.Config{}, nil) }
)
