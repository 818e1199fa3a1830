"""The analysis plan (`analysis/plan.yaml`, `plan_file`) and the registry of primary tests it
names (`primary_tests`): the lowest layer of `analysis/`, read by the statistics, the
simulations, planning and the report."""
