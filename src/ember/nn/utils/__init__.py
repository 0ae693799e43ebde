"""ember.nn.utils: same as torch.nn.utils (filled in by later milestones)."""
