package drain

// LabelHeld is on every node Drainpipe holds out of service (cordoned,
// tainted or tainted out of service), and goes when the node is given
// back: the sweep lists held nodes with HeldSelector alone, so a cluster
// where Drainpipe holds nothing costs one narrow LIST. A label, not an
// annotation, because only labels can be selected on.
const (
	LabelHeld    = "drainpipe.dev/held"
	labelHeldOn  = "true"
	HeldSelector = LabelHeld + "=" + labelHeldOn
)

// heldLabel adds LabelHeld to a cordon's labels when the node lacks it.
func heldLabel(labels map[string]string, have map[string]string, changed []string) (map[string]string, []string) {
	if have[LabelHeld] == labelHeldOn {
		return labels, changed
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelHeld] = labelHeldOn
	return labels, append(changed, "held label")
}
