#!/usr/bin/env python3
"""post-urls.py BASE_URL HOST OUT_DIR: every published post of the WordPress at BASE_URL (asked
with Host: HOST, through the REST API), newest first (rank 1 of make bench's Zipf distribution
is the newest post): paths in OUT_DIR/urls.txt, "id path" in OUT_DIR/posts.txt."""
import json, sys, urllib.error, urllib.request

base, host, out = sys.argv[1:]
posts, page = [], 1
while True:
    req = urllib.request.Request(f"{base}/wp-json/wp/v2/posts?per_page=100&page={page}&_fields=id,link&orderby=date&order=desc",
                                 headers={"Host": host})
    try:
        batch = json.load(urllib.request.urlopen(req, timeout=60))
    except urllib.error.HTTPError as e:
        if e.code == 400:   # past the last page
            break
        raise
    posts += [(p["id"], "/" + p["link"].split("/", 3)[3]) for p in batch]
    if len(batch) < 100:
        break
    page += 1
if not posts:
    sys.exit(f"post-urls: {base} (Host: {host}) lists no published post")
open(f"{out}/urls.txt", "w").write("".join(f"{path}\n" for _, path in posts))
open(f"{out}/posts.txt", "w").write("".join(f"{i} {path}\n" for i, path in posts))
