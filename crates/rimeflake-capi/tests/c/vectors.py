#!/usr/bin/env python3
"""Turns testdata/vectors.json into a C header of arrays (so the C tests need no JSON library).

Usage: vectors.py testdata/vectors.json OUT.h
"""
import json
import sys


def s(text):
    # JSON string escapes are C's for ASCII text; the vectors are ASCII.
    assert text.isascii(), text
    return json.dumps(text)


def u(value):
    return f"UINT64_C({int(value)})"


def spec(layout):
    # The layout's spec (Layout::describe): every field written out, baidu's epoch included.
    return layout["spec"]


def opt(text):
    return "NULL" if text is None else s(text)


def parts(p):
    # rimeflake_parts: clock_id, timestamp_ms, worker_id, sequence, datacenter_id,
    # has_datacenter_id.
    dc = p.get("datacenter_id")
    return (f"{{{u(p['clock_id'])}, {u(p['timestamp_ms'])}, {u(p['worker_id'])}, "
            f"{u(p['sequence'])}, {u(dc or 0)}, {'true' if dc is not None else 'false'}}}")


def main(src, dst):
    d = json.load(open(src))
    out = ["/* Generated from testdata/vectors.json by vectors.py: do not edit. */", ""]
    cases, bad_ids, bad_parts = [], [], []
    for layout in d["layouts"]:
        sp = s(spec(layout))
        for c in layout["cases"]:
            e = c["encodings"]
            cases.append(f"  {{{sp}, {s(c['name'])}, {parts(c['parts'])}, {u(c['id'])}, "
                         f"{s(e['dec'])}, {s(e['hex'])}, {s(e['base62'])}, {s(e['base32'])}}},")
        for c in layout["invalid_ids"]:
            bad_ids.append(f"  {{{sp}, {u(c['id'])}, {s('RIMEFLAKE_' + c['error'])}}},")
        for c in layout["invalid_parts"]:
            bad_parts.append(f"  {{{sp}, {parts(c['parts'])}, {s('RIMEFLAKE_' + c['error'])}}},")
    layouts = [f"  {{{s(l['preset'])}, {s(spec(l))}}}," for l in d["layouts"]]
    bad_layouts = []
    for c in d["invalid_layouts"]:
        name = c["preset"] if c["epoch_ms"] is None else f"{c['preset']},epoch_ms={c['epoch_ms']}"
        bad_layouts.append(f"  {{{s(name)}, {s('RIMEFLAKE_' + c['error'])}}},")
    specs = []
    for c in d["layout_specs"]:
        error = None if "error" not in c else "RIMEFLAKE_" + c["error"]
        specs.append(f"  {{{s(c['spec'])}, {opt(c.get('name'))}, {opt(c.get('describe'))}, "
                     f"{opt(error)}}},")
    enc = d["encodings"]
    trips = [f"  {{{u(c['id'])}, {s(c['dec'])}, {s(c['hex'])}, {s(c['base62'])}, {s(c['base32'])}}},"
             for c in enc["round_trip"]]
    aliases = [f"  {{{s(c['encoding'])}, {s(c['text'])}, {u(c['id'])}}}," for c in enc["aliases"]]
    bad_texts = [f"  {{{s(c['encoding'])}, {s(c['text'])}, {s('RIMEFLAKE_' + c['error'])}}},"
                 for c in enc["invalid"]]
    for name, kind, rows in [
        ("vector_cases", "struct vector_case", cases),
        ("vector_invalid_ids", "struct vector_invalid_id", bad_ids),
        ("vector_invalid_parts", "struct vector_invalid_parts", bad_parts),
        ("vector_layouts", "struct vector_layout", layouts),
        ("vector_invalid_layouts", "struct vector_invalid_layout", bad_layouts),
        ("vector_layout_specs", "struct vector_layout_spec", specs),
        ("vector_round_trips", "struct vector_round_trip", trips),
        ("vector_aliases", "struct vector_alias", aliases),
        ("vector_invalid_texts", "struct vector_invalid_text", bad_texts),
    ]:
        assert rows, f"{name}: no rows in {src}"
        out += [f"static const {kind} {name}[] = {{", *rows, "};", ""]
    open(dst, "w").write("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
