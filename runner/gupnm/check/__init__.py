"""make check: the checks that prove the test and the runner right, and their count."""
