#!/usr/bin/env python3
"""Replace the text between <!-- section:NAME:start --> and <!-- section:NAME:end --> in README.md with stdin."""
import re, sys
name = sys.argv[1]
path = sys.argv[2] if len(sys.argv) > 2 else "README.md"
body = sys.stdin.read().strip("\n")
text = open(path).read()
pattern = re.compile(r"(<!-- section:%s:start -->\n).*?(<!-- section:%s:end -->)" % (re.escape(name), re.escape(name)), re.S)
if not pattern.search(text):
    sys.exit(f"no section {name} in {path}")
text = pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)
open(path, "w").write(text)
