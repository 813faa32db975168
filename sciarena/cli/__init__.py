"""The command line: ``python -m sciarena <command>``. main.py holds the one parser; common.py reads the
settings once per run and turns every refusal into one sentence on stderr and exit code 2; each other
module is one command over the stages below.
"""
