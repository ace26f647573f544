package live

import (
	"sync"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// paces keeps one eviction pace per cluster client: every drain of a
// cluster in this instance shares the instance's share of that cluster's
// rate (DRAINPIPE_CLUSTER_EVICTION_RATE, from its fair share over
// DRAINPIPE_MAX_CONCURRENCY up to all of it; see drain.Pace).
type paces struct {
	rate, instances int

	mu sync.Mutex
	by map[kubernetes.Interface]*drain.Pace
}

func newPaces(rate, instances int) *paces {
	return &paces{rate: rate, instances: instances, by: map[kubernetes.Interface]*drain.Pace{}}
}

// of returns k's pace, nil when pacing is off.
func (p *paces) of(k kubernetes.Interface) *drain.Pace {
	if p.rate <= 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc, ok := p.by[k]; ok {
		return pc
	}
	pc := drain.NewPace(float64(p.rate), p.instances)
	p.by[k] = pc
	return pc
}
