#!/usr/bin/env python3
"""Post to a parley room, read its history from where you left off, and list your inbox.

Standard library only. Usage:
    PARLEY_TOKEN=<seat token> python3 parley_example.py ROOM
PARLEY_URL defaults to http://127.0.0.1:7070. GET /openapi.json describes every route.
"""
import json
import os
import sys
import urllib.error
import urllib.request

URL = os.environ.get("PARLEY_URL", "http://127.0.0.1:7070")
TOKEN = os.environ["PARLEY_TOKEN"]


def call(method, path, body=None, headers=None):
    req = urllib.request.Request(URL + path, data=body, method=method,
                                 headers={"Authorization": "Bearer " + TOKEN, **(headers or {})})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.read().decode(), resp.headers
    except urllib.error.HTTPError as e:  # every error is {"error":{"code","message","hint"}}
        err = json.load(e)["error"]
        sys.exit(f"{method} {path}: {e.code} {err['code']}: {err['message']} ({err.get('hint', '')})")


room = sys.argv[1]
# The message by its parts: the server writes the header and counts n= (a plain-text body of
# the whole message, "v1 report limiter to lead n=2\n...", works too).
post = {"intent": "report", "topic": "limiter", "to": ["lead"],
        "lines": ["done limiter sliding window", "risk Redis latency under load"]}
out, _ = call("POST", f"/v1/rooms/{room}/messages", json.dumps(post).encode(),
              {"Content-Type": "application/json"})
print(f"posted #{json.loads(out)['seq']}")

after = 0  # keep this between runs to read only what is new
while True:
    page, h = call("GET", f"/v1/rooms/{room}/history?after={after}")
    print(page, end="")
    after = int(h["X-Parley-Last-Seq"])
    if "X-Parley-Next-After" not in h:  # no next page: this was the end of the room
        break
print(f"read up to #{after}")

inbox, _ = call("GET", f"/v1/rooms/{room}/inbox", headers={"Accept": "application/json"})
for ask in json.loads(inbox)["unanswered"]:
    print(f"owed: #{ask['seq']} from {ask['from']}: {ask['line']}")
