"""`harness run`: every stage in order, on the embedded defaults or as a study file says.

The package re-exports nothing, like the stage packages it runs. Modules: `runner` (`run_study`:
the stages in order, resuming where a study stopped) and `run_settings` (`RunSettings`,
`settings`: defaults, then a study file, then command-line flags). The study file itself is read
by `harness.materials.study_file`, which `harness power` reads too.
"""
