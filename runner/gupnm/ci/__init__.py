"""The ways CI runs the test: kselftest's run_tests, install and gen_tar,
the flat result names CI systems make, and the LAVA jobs.
"""
