"""The roster and the routing of items to reviewers."""
