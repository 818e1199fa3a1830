"""What is fixed before unblinding: the analysis plan file, power and sample size (analytic and
simulated, for a study or a whole bank) and `prereg.md`."""
