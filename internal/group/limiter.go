package group

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Defaults for the zero values of Config.
const (
	// DefaultNamespace holds the slot Leases (deploy/rbac.yaml creates it).
	DefaultNamespace = "drainpipe"
	// DefaultLeaseDuration is how long a slot outlives its last renewal:
	// long enough to keep a drain's slot across the gap to its next
	// delivery (the retry delay: 15 s, doubling), short enough that a
	// killed invocation's slot frees within minutes.
	DefaultLeaseDuration = 2 * time.Minute
	// DefaultPoll spaces a waiting node's looks at its group's slots (one
	// LIST each).
	DefaultPoll = 5 * time.Second
)

// Config configures a Limiter.
type Config struct {
	// Max is the most nodes of a group draining at once; off when zero.
	Max Limit
	// Label is a node label key naming groups, for nodes in neither an
	// Auto Scaling group nor a Karpenter node pool; it also counts an
	// Auto Scaling group's nodes for a percentage.
	Label string
	// Namespace holds the slot Leases.
	Namespace string
	// LeaseDuration is how long a slot outlives its last renewal.
	LeaseDuration time.Duration
	// Poll spaces a waiting node's looks at its group's slots.
	Poll time.Duration
}

func (c Config) withDefaults() Config {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	return c
}

// Limiter hands out the drain slots of groups. It is safe for concurrent
// use; all its state is in the cluster.
type Limiter struct {
	cfg Config
	log *slog.Logger
	now func() time.Time
}

// New returns a Limiter; nil when cfg.Max is off. A nil log discards.
func New(cfg Config, log *slog.Logger) *Limiter {
	if cfg.Max.Off() {
		return nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Limiter{cfg: cfg.withDefaults(), log: log, now: time.Now}
}

// Who is the node that would drain and, when known, its Auto Scaling group.
type Who struct {
	Node string
	ASG  string
}

// Busy is Enter's error when every slot of the group stayed taken until
// the context ended.
type Busy struct {
	Group   Group
	Slots   int
	Holders []string // the nodes holding the slots
}

func (b *Busy) Error() string {
	return fmt.Sprintf("all %d drain slot(s) of group %s are held (by %s)", b.Slots, b.Group.Name, strings.Join(b.Holders, ", "))
}

// Enter takes a slot of the node's group for it, waiting until one is
// free or ctx ends (then the error is a *Busy). onWait is called once,
// before the first wait, when every slot is taken: the caller cordons the
// node then. A nil Slot with a nil error means the node is in no group
// and its drain is not limited.
func (l *Limiter) Enter(ctx context.Context, client kubernetes.Interface, who Who, onWait func(Busy)) (*Slot, error) {
	node, err := client.CoreV1().Nodes().Get(ctx, who.Node, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading node %s for its group: %w", who.Node, err)
	}
	g, ok := Of(who.ASG, node.Labels, l.cfg.Label)
	if !ok {
		l.log.Debug("node in no group: its drain is not limited", "node", who.Node)
		return nil, nil
	}
	slots, err := l.slots(ctx, client, g)
	if err != nil {
		return nil, err
	}
	waited := false
	for {
		s, busy, err := l.try(ctx, client, g, slots, who.Node)
		if s != nil || err != nil {
			if s != nil && waited {
				l.log.Info("took a drain slot after waiting", "node", who.Node, "group", g.Name, "lease", s.Name())
			}
			return s, err
		}
		if !waited {
			waited = true
			l.log.Info("waiting for a drain slot", "node", who.Node, "group", g.Name, "slots", slots,
				"held_by", busy.Holders)
			if onWait != nil {
				onWait(busy)
			}
		}
		if !l.pause(ctx) {
			return nil, &busy
		}
	}
}

// slots is the group's number of slots: the limit, or its percentage of
// the nodes the group's selector matches (one LIST, from the API server's
// cache).
func (l *Limiter) slots(ctx context.Context, client kubernetes.Interface, g Group) (int, error) {
	if l.cfg.Max.Percent == 0 {
		return l.cfg.Max.Slots(0), nil
	}
	if g.Selector == "" {
		l.log.Warn("no label counts the group's nodes: one drains at a time (set DRAINPIPE_GROUP_LABEL)", "group", g.Name)
		return 1, nil
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: g.Selector, ResourceVersion: "0"})
	if err != nil {
		return 0, fmt.Errorf("counting the nodes of group %s (%s): %w", g.Name, g.Selector, err)
	}
	return l.cfg.Max.Slots(len(nodes.Items)), nil
}

// pause waits one poll interval, jittered so that waiting nodes spread
// their looks; false when ctx ended first.
func (l *Limiter) pause(ctx context.Context) bool {
	t := time.NewTimer(jittered(l.cfg.Poll, rand.Int64N))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// jittered is poll plus up to a fifth more, drawn by n (rand.Int64N: a
// number in [0, max)).
func jittered(poll time.Duration, n func(max int64) int64) time.Duration {
	return poll + time.Duration(n(int64(poll)/5+1))
}

// offset spreads nodes over the slots so that concurrent takers mostly
// try different Leases first.
func offset(node string, slots int) int {
	h := fnv.New32a()
	h.Write([]byte(node))
	return int(h.Sum32() % uint32(slots))
}

// errLost is a slot taken by someone else between our read and our write.
var errLost = errors.New("slot taken meanwhile")
