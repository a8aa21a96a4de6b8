"""Prints the YAML documents of a file as one JSON array (PyYAML's safe loader), for the
deployment tests: a manifest that does not parse fails here."""

import json
import sys

import yaml

with open(sys.argv[1], encoding="utf-8") as f:
    print(json.dumps([d for d in yaml.safe_load_all(f) if d is not None]))
