package drain

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
