"""Fetches IDs from `rimeflake serve` with urllib, from many threads at once: prints every ID.

python3 client.py BASE_URL THREADS REQUESTS [TOKEN]: each thread asks /id REQUESTS times (plain
text, then JSON on every other request) and /ids?n=100 once (JSON).
"""

import json
import sys
import threading
import urllib.request


def fetch(url: str, token: str | None, want_json: bool) -> str:
    headers = {"Accept": "application/json"} if want_json else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as r:
        return r.read().decode()


def worker(base: str, requests: int, token: str | None, out: list[int]) -> None:
    for i in range(requests):
        if i % 2:
            out.append(int(json.loads(fetch(f"{base}/id", token, True))["id"]))
        else:
            out.append(int(fetch(f"{base}/id", token, False)))
    out.extend(int(x) for x in json.loads(fetch(f"{base}/ids?n=100", token, True))["ids"])


def main() -> None:
    base, threads, requests = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    token = sys.argv[4] if len(sys.argv) > 4 else None
    results: list[list[int]] = [[] for _ in range(threads)]
    pool = [
        threading.Thread(target=worker, args=(base, requests, token, results[t]))
        for t in range(threads)
    ]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    ids = [i for r in results for i in r]
    if len(ids) != threads * (requests + 100):
        sys.exit(f"a thread failed: {len(ids)} IDs")
    print("\n".join(map(str, ids)))


if __name__ == "__main__":
    main()
