"""Control items: where they come from, how many each reviewer gets, and their routing."""
