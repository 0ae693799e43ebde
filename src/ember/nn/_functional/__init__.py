"""nn.functional, one module per op family; ember.nn.functional re-exports them all."""
