#!/usr/bin/env python3
"""The book's benchmark pages and charts, made from BENCHMARKS.md.

BENCHMARKS.md stays the record every bench script writes its figures into; this script reads
it and writes, under docs/src/benchmarks/:

- one page per section (`NN-slug.md`), with the section's charts on top, each with a line
  on what it means for a class and the command that made it; a section too long for one
  page is split by topic (`TOPICS`: each page a topic of its subsections, titled by it),
  never at a line count;
- the record's own words for a reader of the book: a build machine's directory in a command
  (`/work/target-before`) becomes its placeholder (`<target-before>`);
- the headline charts as SVG, each drawn from the figures of one table of BENCHMARKS.md (no
  figure is typed in here: a table that changes shape makes this script fail, naming it);
- the SVGs BENCHMARKS.md already links (`bench/…svg`, drawn by `loadtest`), copied beside
  the pages so the built book carries them;
- the Benchmarks part of docs/src/SUMMARY.md, and the table of contents at the top of
  BENCHMARKS.md (between `<!-- toc -->` and `<!-- /toc -->`).

    python3 bench/charts.py            # after a bench run has updated BENCHMARKS.md

Standard library only.
"""

import os
import re
import shutil
import sys
from html import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "BENCHMARKS.md")
OUT = os.path.join(ROOT, "docs", "src", "benchmarks")
SUMMARY = os.path.join(ROOT, "docs", "src", "SUMMARY.md")
# A page of the book stays under the house limit of 600 lines: a longer section needs topics.
PAGE_LINES = 550

# The sections too long for one page, split by topic: each topic a page title and the
# subsections (`### ` titles, by their start) it holds, in the page's order; the section's
# text before its first subsection opens the first topic. Every subsection must fall in one.
TOPICS = {
    "3b": [
        ("Where a hand-off's time goes (profile)",
         ["CPU per item sold", "perf (same run", "Reading it", "Second pass"]),
        ("Before and after each change to the sale path",
         ["Before/after a sale-path change", "Before/after a day's", "Before/after the step",
          "Before/after one source", "Before/after the sale's one door", "Before/after the lease stamps"]),
    ],
    "11": [
        ("Hand-off and fairness per tier",
         ["Every tier with `fair`, on a quiet machine"]),
        ("How `fair` was built: its line, and its attempt parked in the store",
         ["`fair`, and each instance's line", "`fair` handing on within the instance",
          "`fair` with its next attempt parked"]),
        ("Where an in-order lock's tail comes from",
         ["The floor of an in-order lock's tail", "One thread per instance",
          "`fair`'s tail: three more things tried", "Where a turn of `fair`'s queue goes",
          "A parked buyer's call", "Where the slowest turns"]),
    ],
}

# Okabe–Ito: readable by the colour-blind, as the dashboard's palette.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442"]


def sections(text):
    """(number or None, title, lines) for every `## ` section; the preamble first."""
    out = [(None, "Benchmarks", [])]
    fence = False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^## (.*)$", line)
        if m:
            title = m.group(1)
            num = re.match(r"^(\d+[a-z]?)\. ", title)
            out.append((num.group(1) if num else None, title, [line]))
        else:
            out[-1][2].append(line)
    return out


def table_after(lines, marker, first_header):
    """The rows (lists of cells) of the first table after the line containing `marker`
    whose header's first cell is `first_header`."""
    seen = False
    for i, line in enumerate(lines):
        if marker in line:
            seen = True
        if seen and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] == first_header and i + 1 < len(lines) and lines[i + 1].startswith("|-"):
                rows = []
                for row in lines[i + 2:]:
                    if not row.startswith("|"):
                        break
                    rows.append([c.strip() for c in row.strip().strip("|").split("|")])
                return cells, rows
    sys.exit(f"charts: no table with header `{first_header}` after `{marker}` in BENCHMARKS.md")


def number(cell):
    """The first number in a cell: `**900**` → 900, `1,269` → 1269, `20/20` → 20."""
    m = re.search(r"-?\d[\d,]*(\.\d+)?", cell.replace("**", ""))
    if not m:
        sys.exit(f"charts: no number in cell `{cell}`")
    return float(m.group(0).replace(",", ""))


def bar_chart(path, title, caption, bars, unit, fmt="{:,.0f}"):
    """A horizontal bar chart: `bars` is [(label, value, colour index)]."""
    label_w, bar_w, row_h, top = 260, 420, 22, 56
    width = label_w + bar_w + 90
    height = top + row_h * len(bars) + 44
    most = max(v for _, v, _ in bars) or 1
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="10" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
        f'<text x="10" y="42" fill="#444">{escape(caption)}</text>',
    ]
    for i, (label, value, colour) in enumerate(bars):
        y = top + i * row_h
        w = max(1.0, bar_w * value / most) if value > 0 else 0
        out.append(
            f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end">{escape(label)}</text>'
        )
        out.append(
            f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" '
            f'fill="{COLOURS[colour % len(COLOURS)]}"/>'
        )
        out.append(
            f'<text x="{label_w + w + 6:.1f}" y="{y + 15}">{escape(fmt.format(value))}</text>'
        )
    axis_y = top + row_h * len(bars) + 6
    out.append(
        f'<line x1="{label_w}" y1="{top}" x2="{label_w}" y2="{axis_y}" stroke="#333"/>'
    )
    out.append(f'<text x="{label_w}" y="{axis_y + 20}" fill="#444">{escape(unit)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


# Each chart: the section it belongs to, its file, the command whose output the table holds,
# its alt text, one line on what it means for a class, and whether the index shows it among
# the headline figures.
CHARTS = []


def chart(section, name, command, alt, meaning, headline=True):
    def register(draw):
        CHARTS.append((section, name, command, alt, meaning, headline, draw))
        return draw

    return register


@chart("22", "rungs-under-their-faults.svg", "bash bench/rung-faults.sh 3",
       "Sales the stock never recorded, per rung of the ladder under the fault it exists for",
       "Each lock breaks where its own fault strikes: without a lock a crowd alone loses sales, a lock "
       "without a lease stalls when its holder dies, a lease that runs out under the work lets "
       "a second holder in, and only the fencing token or a lock-free deduct keep the stock "
       "right when the holder freezes. The ladder a class climbs, one rung per defect.")
def _(lines, path):
    header, rows = table_after(lines, "| tier | chapter |", "tier")
    lost, stalled = header.index("lost updates"), header.index("503s")
    buyers = header.index("buyers / items")
    bars = []
    for r in rows:
        wrong, s503 = number(r[lost]), number(r[stalled])
        # A rung whose sale stopped: most of its buyers were answered 503.
        stopped = wrong == 0 and s503 * 2 > number(r[buyers].split("/")[0])
        label = f"{r[0]} (stalled: {s503:.0f} × 503)" if stopped else r[0]
        bars.append((label, wrong, 3 if wrong > 0 else (1 if stopped else 2)))
    bar_chart(path, "Each rung under its own fault: sales the stock never recorded",
              "lost updates from Redis, each an item sold twice (medians of 3 runs)",
              bars, "lost updates")


@chart("2", "matrix-oversold.svg",
       "loadtest matrix --instances 3 --tiers all --stock 100 --buyers 1000 --business-ms 5",
       "Items oversold per tier: 1000 buyers for 100 items through nginx, no fault",
       "With no fault, a crowd alone breaks only the tiers with no lock across instances "
       "(none, local): every other lock sells exactly the stock. Each lock's defect needs its "
       "fault, as the chart of the rungs under their faults shows.", headline=False)
def _(lines, path):
    header, rows = table_after(lines, "| tier |", "tier")
    col = header.index("oversold")
    bar_chart(path, "Oversold per tier (100 items, 1000 buyers, 3 instances)",
              "items sold beyond the stock, read from Redis; 0 = correct",
              [(r[0], number(r[col]), 3 if number(r[col]) > 0 else 2) for r in rows],
              "items oversold")


@chart("2", "matrix-throughput.svg",
       "loadtest matrix --instances 3 --tiers all --stock 100 --buyers 1000 --business-ms 5",
       "Answers per second per tier in the same matrix",
       "How fast 1000 buyers are answered, sold or sold out: the price each lock's round "
       "trips add to a sale. A class feels it as the bar's length, not its safety.",
       headline=False)
def _(lines, path):
    header, rows = table_after(lines, "| tier |", "tier")
    col = header.index("req/s")
    bar_chart(path, "Answers per second per tier (the same matrix)",
              "what the 1000 buyers saw, from the release to the last answer",
              [(r[0], number(r[col]), 0) for r in rows], "answers / s")


@chart("3", "selling-rate.svg", "bench/selling-rate.sh http://127.0.0.1:<port> $TOKEN 0 64 5",
       "Sustained items per second per tier, 64 connections, loadtest",
       "What each lock costs when the sale never stops: the safer locks serialize their "
       "sales, so they sell fewer items a second; atomic-deduct needs no lock and is fastest.")
def _(lines, path):
    header, rows = table_after(lines, "| tier | wait |", "tier")
    col = header.index("loadtest items/s")
    seen, bars = set(), []
    for r in rows:
        if r[1] == "pubsub" and r[0] not in seen:
            seen.add(r[0])
            bars.append((r[0], number(r[col]), 0 if r[0] != "none" else 3))
    bar_chart(path, "Sustained selling rate per tier (wait pubsub)",
              "items/s from the ledger, closed loop of 64 connections, business 0 ms",
              bars, "items / s")


@chart("7", "redis-zookeeper-database.svg",
       'PARTS="speed database" bash bench/redis-zookeeper-or-database.sh 20 5 3',
       "Items per second of every surviving lock on one fleet, the database's included",
       "Redis, ZooKeeper and PostgreSQL locks side by side on one fleet: the answer to "
       "'which lock for which job' is partly this price.")
def _(lines, path):
    # The run with all three places side by side (the quiet run before it had no database).
    header, rows = table_after(lines, "### Redis, ZooKeeper or a database (", "tier")
    col = header.index("vs lua-release")
    group = {"redlock": 1, "zookeeper": 2, "zookeeper-fenced": 2, "postgres": 4,
             "postgres-fenced": 4}
    bar_chart(path, "Redis, ZooKeeper or a database: selling rate vs lua-release",
              "one fleet, 64 connections, business 0 ms, medians of 3 rounds (a busy machine: "
              "read the ratios)",
              [(r[0], number(r[col]), group.get(r[0], 0)) for r in rows], "× lua-release",
              fmt="{:.2f}×")


@chart("13", "course-chapter-times.svg", "sudo nice -n -5 loadtest course --repeat 20",
       "Seconds one run of each chapter took in the course, on two cores",
       "The seconds a chapter's run takes on the projector: every one is short next to the "
       "minutes a vote takes, so a run sheet's time goes to the class, not the fleet.")
def _(lines, path):
    header, rows = table_after(lines, "| group | chapter |", "group")
    col = header.index("s")
    groups = []
    bars = []
    for r in rows:
        if r[col] in ("—", ""):
            continue
        if r[0] not in groups:
            groups.append(r[0])
        name = re.sub(r"`([^`]*)`.*", r"\1", r[1])
        bars.append((name, number(r[col]) / 20.0, groups.index(r[0])))
    bar_chart(path, "One run of each chapter, seconds (course --repeat 20 ÷ 20)",
              "colour = group: " + ", ".join(groups) + "; the fleet's start is extra",
              bars, "seconds a run", fmt="{:.1f}")


@chart("15", "vote-storm.svg", "target/release/vote-storm",
       "Sale rate while 300 phones vote, and the vote's p99",
       "A whole lecture hall voting from its phones costs the demo's sale nothing visible, "
       "and each vote is counted well within a second.")
def _(lines, path):
    _, rows = table_after(lines, "Again on a quiet machine", "")
    rates = next(r for r in rows if r[0].startswith("sale rate, medians"))
    latency = next(r for r in rows if r[0].startswith("vote latency"))
    p50, p99, top = (number(x) for x in latency[2].replace("**", "").split("/"))
    bar_chart(path, "300 phones voting beside the demo (quiet machine)",
              "sales/s medians of the quiet and voting phases; vote latency in ms",
              [("sales/s, quiet", number(rates[1]), 0), ("sales/s, voting", number(rates[2]), 2),
               ("vote p50 ms", p50, 1), ("vote p99 ms", p99, 1), ("vote max ms", top, 1)],
              "sales/s or ms", fmt="{:,.1f}")


def slug(title):
    title = re.sub(r"\s*\(.*?\)", "", title)
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return s[:40].rsplit("-", 1)[0] if len(s) > 40 else s


def demote(lines):
    """`## x` → `# x` and so on, outside code fences; image links to the copies."""
    out, fence = [], False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        if not fence:
            m = re.match(r"^(#{2,6}) (.*)$", line)
            if m:
                line = "#" * (len(m.group(1)) - 1) + " " + m.group(2)
            line = re.sub(r"\]\(bench/([^)]*\.svg)\)",
                          lambda mm: "](img/" + mm.group(1).replace("/", "-") + ")", line)
        line = MACHINE_PATH.sub(lambda mm: "<" + mm.group(0).rstrip("/").rsplit("/", 1)[-1]
                                + ">", line)
        out.append(line)
    return out


# A build machine's own directory in a recorded command: `/work/target-before`, `/tmp/ba-base`.
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|tmp)/[\w.+-]+(?:/[\w.+-]+)*")


def subsections(lines):
    """A section's lines cut before each `### ` line outside fences: the text before the
    first subsection, then each subsection."""
    chunks, fence = [[]], False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("### ") and chunks[-1]:
            chunks.append([])
        chunks[-1].append(line)
    return chunks


def split(num, title, lines):
    """A section's pages as (title, lines): the section whole, or by its TOPICS."""
    if num not in TOPICS:
        if len(lines) > PAGE_LINES:
            sys.exit(f"charts: section {num or title!r} has {len(lines)} lines, more than a "
                     f"page ({PAGE_LINES}): give it topics in TOPICS")
        return [(title, lines)]
    chunks = subsections(lines)
    intro, rest = chunks[0], chunks[1:]
    pages, used = [], set()
    for k, (topic, starts) in enumerate(TOPICS[num]):
        body = [f"## {topic}"] + (intro[1:] if k == 0 else [""])
        for start in starts:
            found = [i for i, c in enumerate(rest) if c[0][4:].startswith(start)]
            if len(found) != 1:
                sys.exit(f"charts: section {num}'s topic {topic!r} names {start!r}, which "
                         f"starts {len(found)} subsections")
            used.add(found[0])
            body += rest[found[0]]
        if len(body) > PAGE_LINES:
            sys.exit(f"charts: section {num}'s topic {topic!r} has {len(body)} lines: "
                     "split it into topics")
        pages.append((topic, body))
    left = [rest[i][0] for i in range(len(rest)) if i not in used]
    if left:
        sys.exit(f"charts: section {num} has subsections in no topic: {left}")
    return pages


def page_name(num, title):
    if num:
        digits = re.match(r"\d+", num).group(0)
        prefix = f"{int(digits):02d}{num[len(digits):]}-"
    else:
        prefix = "00-"
    return prefix + slug(re.sub(r"^\d+[a-z]?\. ", "", title))


def main():
    text = open(BENCH).read()
    text = rewrite_toc(text)
    os.makedirs(os.path.join(OUT, "img"), exist_ok=True)
    for old in os.listdir(OUT):
        if old.endswith(".md") or old.endswith(".svg"):
            os.remove(os.path.join(OUT, old))
    for link in sorted(set(re.findall(r"\]\(bench/([^)]*\.svg)\)", text))):
        shutil.copy(os.path.join(ROOT, "bench", link),
                    os.path.join(OUT, "img", link.replace("/", "-")))
    secs = sections(text)
    drawn = {}
    for section, name, command, alt, meaning, headline, draw in CHARTS:
        lines = next(s[2] for s in secs if s[0] == section)
        draw(lines, os.path.join(OUT, name))
        drawn.setdefault(section, []).append((name, command, alt, meaning))
    summary = []
    index = ["# Benchmarks", "",
             "<!-- Generated by `python3 bench/charts.py` from BENCHMARKS.md: do not edit. -->",
             ""]
    index += without_toc(secs[0][2][1:])
    index += ["", "## The headline figures", ""]
    for section, name, command, alt, meaning, headline, _ in CHARTS:
        if headline:
            index += [f"![{alt}]({name})", "", f"*For a class:* {meaning}", "",
                      f"Section {section}; figures from `{command}`, drawn by "
                      "`python3 bench/charts.py`.", ""]
    index += ["## Sections", ""]
    for num, title, lines in secs[1:]:
        base = page_name(num, title)
        for k, (label, part) in enumerate(split(num, title, lines)):
            page = (page_name(num, label) if k else base) + ".md"
            body = demote(part)
            head = [body[0], "",
                    "<!-- Generated by `python3 bench/charts.py` from BENCHMARKS.md: "
                    "do not edit. -->", ""]
            if k == 0:
                for name, command, alt, meaning in drawn.get(num, []):
                    head += [f"![{alt}]({name})", "", f"*For a class:* {meaning}", "",
                             f"The figures: `{command}`; the chart: `python3 bench/charts.py`.",
                             ""]
            with open(os.path.join(OUT, page), "w") as f:
                f.write("\n".join(head + body[1:]).rstrip("\n") + "\n")
            # mdBook numbers the entries itself: the section's own number would be a second.
            short = re.sub(r"^\d+[a-z]?\. ", "", label)
            summary.append(f"  - [{short}](benchmarks/{page})")
            index.append(f"- [{short}]({page})")
    with open(os.path.join(OUT, "index.md"), "w") as f:
        f.write("\n".join(index).rstrip("\n") + "\n")
    rewrite_summary(summary)
    print(f"charts: {len(CHARTS)} charts, {len(summary)} pages in {os.path.relpath(OUT, ROOT)}")


TOC_OPEN, TOC_CLOSE = "<!-- toc -->", "<!-- /toc -->"


def anchor(title):
    """The anchor GitHub makes of a heading: lowercase, punctuation dropped, spaces dashed."""
    t = re.sub(r"[^\w\- ]", "", title.lower().replace("`", ""))
    return t.replace(" ", "-")


def rewrite_toc(text):
    """BENCHMARKS.md with its table of contents (every `## ` section) made anew after its
    first paragraph, written back; the text returned."""
    lines = text.split("\n")
    if TOC_OPEN in lines:
        a, b = lines.index(TOC_OPEN), lines.index(TOC_CLOSE)
        del lines[a:b + 2 if b + 1 < len(lines) and lines[b + 1] == "" else b + 1]
    titles, fence = [], False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("## "):
            titles.append(line[3:])
    toc = [TOC_OPEN, "**Contents**", ""] + [f"- [{t}](#{anchor(t)})" for t in titles] + \
        [TOC_CLOSE, ""]
    at = next(i for i, l in enumerate(lines) if l.startswith("## "))
    lines[at:at] = toc
    text = "\n".join(lines)
    with open(BENCH, "w") as f:
        f.write(text)
    return text


def without_toc(lines):
    """The preamble's lines without the table of contents (the book has its own)."""
    if TOC_OPEN not in lines:
        return lines
    a, b = lines.index(TOC_OPEN), lines.index(TOC_CLOSE)
    return lines[:a] + lines[b + 1:]


def rewrite_summary(entries):
    """The entries under `- [Benchmarks](benchmarks/index.md)` in SUMMARY.md, replaced."""
    lines = open(SUMMARY).read().split("\n")
    at = next((i for i, l in enumerate(lines) if l.startswith("- [Benchmarks](")), None)
    if at is None:
        sys.exit("charts: SUMMARY.md has no `- [Benchmarks](benchmarks/index.md)` line")
    end = at + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    lines[at + 1:end] = entries
    with open(SUMMARY, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
