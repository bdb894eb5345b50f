#!/usr/bin/env python3
"""Regenerates the output of every command shown in README.md and the book (docs/src/*.md),
and checks their links.

A code block whose first line starts with `$ warpscope ` (or `$ ` and a shell pipeline
starting with warpscope) is run from the repository root with target/release/warpscope first
on PATH, and the block's remaining lines are replaced by what it printed (stdout, then
stderr). `--check` only reports the blocks whose output differs (exit 1), for CI or review.

Links: every relative link `[text](target)` and image of these pages must name a file that
exists (relative to the page) and, with `#anchor`, a heading of that page; every chapter of
docs/src must be listed in docs/src/SUMMARY.md. A broken link fails both modes.

    scripts/readme.py [--check] [PAGE.md ...]   (build first: cargo build --release --features cuda)
"""
import glob
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
env = dict(os.environ)
env["PATH"] = os.path.join(root, "target", "release") + os.pathsep + env.get("PATH", "")
env.pop("COLUMNS", None)

block = re.compile(r"^```\n(\$ [^\n]*)\n(.*?)^```\n", re.S | re.M)
link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
fence = re.compile(r"^```.*?^```\n", re.S | re.M)


def slug(heading):
    """The anchor GitHub and mdBook give a heading: lower case, punctuation dropped, spaces to '-'."""
    s = re.sub(r"[`*_]", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    text = fence.sub("", open(path, encoding="utf-8").read())
    return {slug(h) for h in re.findall(r"(?m)^#+ (.*)$", text)}


def check_links(page, text):
    broken = []
    for target in link.findall(fence.sub("", text)):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
        if not os.path.exists(path):
            broken.append(f"{os.path.relpath(page, root)}: link to missing {target}")
        elif anchor and path.endswith(".md") and anchor not in anchors(path):
            broken.append(f"{os.path.relpath(page, root)}: no heading #{anchor} in {file or 'this page'}")
    return broken


def regenerate(page, changed):
    def run(m):
        cmd = m.group(1)[2:]
        if not cmd.startswith("warpscope "):
            return m.group(0)
        p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=root, env=env,
                           capture_output=True, text=True)
        out = p.stdout + p.stderr
        if not out.endswith("\n"):
            out += "\n"
        if out != m.group(2):
            changed.append(f"{os.path.relpath(page, root)}: {cmd}")
        return f"```\n{m.group(1)}\n{out}```\n"

    return block.sub(run, open(page, encoding="utf-8").read())


def main():
    check = "--check" in sys.argv
    pages = [os.path.abspath(p) for p in sys.argv[1:] if p != "--check"]
    book = os.path.join(root, "docs", "src")
    if not pages:
        pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(book, "*.md")))
    changed, broken = [], []
    summary = open(os.path.join(book, "SUMMARY.md"), encoding="utf-8").read()
    for chapter in glob.glob(os.path.join(book, "*.md")):
        name = os.path.basename(chapter)
        if name != "SUMMARY.md" and f"({name})" not in summary:
            broken.append(f"docs/src/{name} is not in docs/src/SUMMARY.md")
    for page in pages:
        new = regenerate(page, changed)
        broken += check_links(page, new)
        if not check:
            open(page, "w", encoding="utf-8").write(new)
    for b in broken:
        print(b)
    if check:
        for c in changed:
            print(f"output differs: {c}")
        sys.exit(1 if changed or broken else 0)
    print(f"{len(changed)} block(s) updated")
    sys.exit(1 if broken else 0)


main()
