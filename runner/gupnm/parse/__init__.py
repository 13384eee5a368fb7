"""Read what a guest said: the status port, TAP, the console, the module load."""
