"""The top floor: the root `veritrain` command, the reports and the demo.

Imported by nothing below it. The role packages each keep their own `cli.py` sub-app, which
`cli.app` mounts; the testing-only adversary group is mounted here too.

Run: ``veritrain --help`` (console script ``veritrain = "cli.app:app"``).
"""
