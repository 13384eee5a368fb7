"""What a run leaves: summary.json and its schema, junit.xml, ktap.txt,
and the benchmark's figures and statistics.
"""
