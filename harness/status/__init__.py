"""`harness status` and `harness verify`: what a study holds, what comes next, and whether its
materials changed since it was made. Reads the store and the manifest; writes nothing.

The package re-exports nothing, so the closing line every stage prints (`next_step`) loads only
what it reads. Modules: `stage_table` (`study_status`, `print_status`: one row per stage),
`next_command` (`next_step`: the next command, as one line), `started` (`check_started`: a folder
that is no study, or one in which nothing has run, refused in one line) and `verify_report`
(`print_verify`: materials and environment against the manifest's record).
"""
