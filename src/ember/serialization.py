"""ember.save / ember.load."""
