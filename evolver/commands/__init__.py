"""The command line: one module per verb or group of verbs (cli.py builds the parser)."""
