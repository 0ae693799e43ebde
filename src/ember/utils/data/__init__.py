"""ember.utils.data: same as torch.utils.data."""
