import os
import sys

# make tests/oracles.py importable as `oracles`
sys.path.insert(0, os.path.dirname(__file__))

# Generated right-hand sides in the suite are the Python ones unless a test asks for C (tests/numerics/
# test_codegen.py forces each backend): a fresh machine would otherwise build a C library for every distinct
# large program the suite simulates (seconds each), which measures the compiler, not anholo.
os.environ.setdefault("ANHOLO_CODEGEN", "python")
