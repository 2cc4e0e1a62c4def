import os
import sys

# make tests/oracles.py importable as `oracles`
sys.path.insert(0, os.path.dirname(__file__))
