"""Reads /metrics with prometheus_client's own parser and prints each sample as
`name{labels} value`, so the caller can check names and values; a malformed page fails here."""

import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

with urllib.request.urlopen(sys.argv[1] + "/metrics", timeout=60) as r:
    page = r.read().decode()
for family in text_string_to_metric_families(page):
    for s in family.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        print(f"{family.type} {s.name}{{{labels}}} {s.value}")
