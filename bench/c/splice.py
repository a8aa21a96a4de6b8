#!/usr/bin/env python3
"""Puts a section between <!-- c:begin --> and <!-- c:end --> in RESULTS.md (appended the first
time, replaced by later runs). Usage: splice.py RESULTS.md SECTION.md"""
import re
import sys

results, section = sys.argv[1], open(sys.argv[2]).read().rstrip() + "\n"
text = open(results).read()
block = f"<!-- c:begin -->\n{section}<!-- c:end -->\n"
pattern = re.compile(r"<!-- c:begin -->.*?<!-- c:end -->\n", re.S)
text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block
open(results, "w").write(text)
