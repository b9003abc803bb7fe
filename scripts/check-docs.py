#!/usr/bin/env python3
"""Runs the console blocks of docs/*.md that are marked to be checked and
compares what each command prints with what the page shows, so that the
pages cannot drift from the tools.

A block is checked when the line before its opening fence is

    <!-- check-docs -->

and the fence is ```console; any other block of commands must say why it
is not checked (<!-- gpu-transcript: ... --> or <!-- transcript: ... -->). Its lines starting with "$ " are commands, run
in order by one bash (so `cd` and variables carry over) from the
repository root, with the build's tools first on PATH; the lines after a
command, up to the next command, are its expected output (stdout and
stderr together). Before comparing, both sides are normalized where a
value is the machine's and not the tool's: decimal numbers (times), the
commit and the ptxas directory `tilec --version` names, SHA-256 digests
(stage keys hash the compiler's build-ids), build-ids and ISO times, and
sizes (with a unit or in bytes). Exits non-zero, and prints the difference, when any output differs
or a command fails where the page shows no error. One run at a time on a
machine (the blocks share folders under /tmp/tilec-docs); the blocks'
mktemp folders live in a TMPDIR removed after the run.

    scripts/check-docs.py [--build-dir build] [docs/environment.md ...]

On a GPU machine, --gpu runs the blocks marked <!-- gpu-transcript: ... -->
instead (the same way: commands from "$ " lines, outputs compared), and
--update writes what each command printed into the page in place of what
it showed, so that the GPU transcripts are regenerated rather than typed:

    scripts/check-docs.py --gpu --update --build-dir /tmp/gpu-bundle

Outside --gpu it also checks the pages' links (those of README.md too,
when no page is named): a markdown link to a relative path, with or
without #anchor, must name a file that exists, relative to the linking
page's folder, and an anchor into a .md page must be one of that page's
headings as GitHub spells it (lowercase, characters other than letters,
digits, spaces, hyphens and underscores dropped, spaces made hyphens,
-1, -2 ... after repeated headings; headings in fenced blocks do not
count). A link in a fenced block or in inline code is not a link. Each
broken link is printed as page:line and the run exits non-zero.
--links-only checks the links alone, no build needed:

    scripts/check-docs.py --links-only [docs/bench.md ...]
"""

import argparse
import difflib
import fcntl
import functools
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import urllib.parse

MARKER = "<!-- check-docs -->"
# A block of commands that is not checked says why, on the line before it:
# <!-- gpu-transcript: ... --> (recorded on the GPU machine) or
# <!-- transcript: why check-docs cannot run it -->. A block with none of
# the three is an error, so that no new transcript goes unchecked silently.
UNCHECKED = ("<!-- gpu-transcript:", "<!-- transcript:")
ROOT = pathlib.Path(__file__).resolve().parent.parent

# What differs between machines and runs, not between versions of the
# tools: each pattern's matches become the same text on both sides.
NORMALIZE = [
    (re.compile(r"\(commit [0-9a-f]{7,40}(\+modified)?\)|\(commit unknown\)"),
     "(commit <commit>)"),
    # Where the toolkit lives (/usr/local/cuda, /usr/local/cuda-13.0, a
    # wheel's site-packages) is the machine's; its build line is the tool's.
    (re.compile(r"ptxas: /\S*/ptxas "), "ptxas: <directory>/ptxas "),
    # Stage keys and checksums hash the compiler's build-ids (a stage
    # cache's entry lives under the key's first two digits).
    (re.compile(r"\b[0-9a-f]{2}/[0-9a-f]{64}\b"), "<shard>/<sha256>"),
    # A cubin's checksum is ptxas's (its bytes), not the tool's.
    (re.compile(r"CRC-32C [0-9a-f]{8}, the manifest says '[0-9a-f]{8}'"),
     "CRC-32C <crc>, the manifest says '<crc>'"),
    # A bundle names when and by which build of the tools it was packed.
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b"), "<time>"),
    (re.compile(r"build-id:[0-9a-f]+"), "build-id:<id>"),
    (re.compile(r"\b[0-9a-f]{64}\b"), "<sha256>"),
    (re.compile(r"\b\d+\.\d+\b"), "<number>"),
    # Ratios: "4.5x".
    (re.compile(r"\b\d+\.\d+x\b"), "<number>x"),
    (re.compile(r"\b\d+(\.\d+)?[KMG]\b"), "<size>"),
    # A bundle's length moves with its compile jsons' compile times.
    (re.compile(r"\b\d+ bytes\b"), "<size> bytes"),
    # Columns of right-aligned numbers move with the numbers' widths.
    (re.compile(r"  +"), " "),
]


def normalize(lines):
    out = []
    for line in lines:
        line = line.rstrip()
        for pattern, replacement in NORMALIZE:
            line = pattern.sub(replacement, line)
        out.append(line)
    return out


def fenced_blocks(path):
    """(opening fence's line number, the line before it, [body lines]) of
    every fenced block of the page."""
    lines = path.read_text().splitlines()
    found, start = [], None
    for i, line in enumerate(lines):
        if not line.strip().startswith("```"):
            continue
        if start is None:
            start = i
            continue
        before = lines[start - 1].strip() if start > 0 else ""
        found.append((start + 1, before, lines[start + 1:i]))
        start = None
    if start is not None:
        raise SystemExit(f"{path}:{start + 1}: the block has no closing fence")
    for i, line in enumerate(lines):
        if line.strip() == MARKER and (
                i + 1 >= len(lines) or lines[i + 1].strip() != "```console"):
            raise SystemExit(f"{path}:{i + 1}: {MARKER} must precede a "
                             f"```console fence")
    return found


GPU_MARKER = "<!-- gpu-transcript:"


def blocks(path, gpu=False):
    """(first line number, [lines]) of each marked console block, or with
    `gpu` of each GPU transcript."""
    return [(fence + 1, body) for fence, before, body in fenced_blocks(path)
            if (before.startswith(GPU_MARKER) if gpu else before == MARKER)]


def rewrite(path, updates):
    """Replaces the bodies of the page's blocks: updates maps a block's first
    line number to its new lines."""
    lines = path.read_text().splitlines()
    for first in sorted(updates, reverse=True):
        old = next(body for fence, _, body in fenced_blocks(path)
                   if fence + 1 == first)
        lines[first - 1:first - 1 + len(old)] = updates[first]
    path.write_text("\n".join(lines) + "\n")


def unmarked_blocks(path):
    """Line numbers of fenced blocks with "$ " commands and no marker."""
    return [fence for fence, before, body in fenced_blocks(path)
            if any(line.lstrip().startswith("$ ") for line in body) and
            before != MARKER and not before.startswith(UNCHECKED)]


def commands(block):
    """(command, expected output lines) in order."""
    steps = []
    for line in block:
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
        else:
            raise SystemExit(f"output before the first command: {line!r}")
    return steps


def run_block(steps, env):
    """Runs the commands in one bash; returns each one's output."""
    script = []
    for index, (command, _) in enumerate(steps):
        # A separator after each command's output, with its status.
        script.append(f"{command}\necho \"@@check-docs {index} $?\"")
    result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=ROOT,
                            env=env, capture_output=True, text=True,
                            timeout=600)
    # stderr is merged into stdout by each command's own redirections or
    # ours: run again per line would lose the shared state, so the block's
    # commands write both to stdout (2>&1 is implied below).
    outputs, current = [], []
    for line in result.stdout.splitlines():
        match = re.match(r"@@check-docs (\d+) (\d+)$", line)
        if match:
            outputs.append((current, int(match.group(2))))
            current = []
        else:
            current.append(line)
    if len(outputs) != len(steps):
        raise RuntimeError(f"the block stopped after {len(outputs)} of "
                           f"{len(steps)} commands: {result.stderr[-500:]}")
    return outputs


# A markdown link or image, [text](target) or [text](<target>), with an
# optional title; the text may hold one level of brackets.
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]'
                  r'\(\s*(<[^>]*>|[^\s()]+)(?:\s+"[^"]*")?\s*\)')
# A code span: a run of backticks up to the next run of the same length.
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


def outside_fences(lines):
    """The page's lines with those of fenced blocks (fences included)
    blanked, so that line numbers stay the page's."""
    out, fenced = [], False
    for line in lines:
        fence = line.strip().startswith("```")
        out.append("" if fenced or fence else line)
        if fence:
            fenced = not fenced
    return out


def prose(path):
    """The page's text outside fenced blocks, with code spans and HTML
    comments blanked (their newlines kept): where its links are."""
    lines = outside_fences(path.read_text().splitlines())
    blank = lambda match: re.sub(r"[^\n]", " ", match.group(0))
    # A code span ends with its paragraph: mask one paragraph at a time.
    paragraphs = re.split(r"(\n[ \t]*\n)", "\n".join(lines))
    return "".join(CODE_SPAN.sub(blank, COMMENT.sub(blank, p))
                   for p in paragraphs)


def slug(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def anchors(path):
    """Every heading anchor of a page, repeated ones with -1, -2, ..."""
    found, seen = set(), {}
    for line in outside_fences(path.read_text().splitlines()):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2) or "")
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page):
    """(line, target, why) of each relative link of the page whose file
    does not exist or whose anchor is no heading of that .md file."""
    text, found = prose(page), []
    for match in LINK.finditer(text):
        target = match.group(1).strip("<>")
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):  # http:, mailto:
            continue
        path, _, anchor = urllib.parse.unquote(target).partition("#")
        file = (page.parent / path) if path else page
        line = text.count("\n", 0, match.start()) + 1
        if not file.is_file():
            found.append((line, target, f"no file {file}"))
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            found.append((line, target, f"no heading #{anchor} in {file}"))
    return found


def check_links(pages):
    """Prints each broken link of the pages; 1 where any is broken."""
    failures = 0
    for page in pages:
        for line, target, why in broken_links(page):
            failures += 1
            print(f"{page}:{line}: broken link ({target}): {why}")
    print(f"check-docs: links of {len(pages)} pages checked, "
          f"{failures} broken")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--gpu", action="store_true",
                        help="run the GPU transcripts instead")
    parser.add_argument("--update", action="store_true",
                        help="write what the commands print into the page")
    parser.add_argument("--links-only", action="store_true",
                        help="check the pages' links only (no build)")
    parser.add_argument("pages", nargs="*")
    args = parser.parse_args()
    pages = [pathlib.Path(p) for p in args.pages] or \
        sorted((ROOT / "docs").glob("*.md"))
    # The links are checked outside --gpu, README.md's too by default.
    linked = pages if args.pages else pages + [ROOT / "README.md"]
    if args.links_only:
        return check_links(linked)
    links = 0 if args.gpu else check_links(linked)
    env = dict(os.environ)
    env["PATH"] = str((ROOT / args.build_dir / "bin").resolve()) + \
        os.pathsep + env["PATH"]
    # The pages' blocks share fixed folders (/tmp/tilec-docs/...): one run
    # at a time on a machine. Their mktemp folders go with the run.
    with open(os.path.join(tempfile.gettempdir(), "tilec-docs.lock"),
              "w") as lock, \
            tempfile.TemporaryDirectory(prefix="tilec-check-docs-") as tmp:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env["TMPDIR"] = tmp
        return check_pages(pages, args, env) or links


def check_pages(pages, args, env):
    """Checks (or with --gpu runs) the pages' blocks; 1 where any differs."""
    checked = failures = 0
    for page in pages:
        for line in unmarked_blocks(page):
            failures += 1
            print(f"{page}:{line}: a block of commands with no "
                  f"{MARKER}, <!-- gpu-transcript: ... --> or "
                  f"<!-- transcript: why --> before it")
        updates = {}
        for line, block in blocks(page, args.gpu):
            steps = commands(block)
            # Each command's stderr with its stdout, in order.
            # (on its own line: a command may end in a comment)
            merged = [(f"{{ {command}\n}} 2>&1", expected)
                      for command, expected in steps]
            try:
                outputs = run_block(merged, env)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                print(f"{page}:{line}: {error}")
                failures += 1
                continue
            rewritten = []
            for (command, expected), (actual, status) in zip(steps, outputs):
                checked += 1
                rewritten += ["$ " + command] + [l.rstrip() for l in actual]
                # A failure the page shows has output (the error); one that
                # says nothing would pass the comparison unseen.
                if status != 0 and not expected and not actual:
                    failures += 1
                    print(f"{page}:{line}: `{command}` exited {status} "
                          f"and printed nothing")
                elif normalize(expected) != normalize(actual):
                    failures += 1
                    print(f"{page}:{line}: `{command}` printed:")
                    sys.stdout.writelines(difflib.unified_diff(
                        [l + "\n" for l in expected],
                        [l + "\n" for l in actual], "page", "tool"))
            if rewritten != block:
                updates[line] = rewritten
        if args.update and updates:
            rewrite(page, updates)
            print(f"{page}: {len(updates)} block(s) written")
    print(f"check-docs: {checked} commands checked, {failures} differ" +
          (" (the pages now show what the tools printed)"
           if args.update and failures else ""))
    return 1 if failures and not args.update else 0


if __name__ == "__main__":
    sys.exit(main())
