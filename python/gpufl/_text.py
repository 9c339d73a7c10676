"""Numbers and tables as the analyzer prints them, in the text report's
units: durations "810.00 ms" / "46.33 us" / "1.623 s", sizes in KiB / MiB
/ GiB, counts grouped by threes ("18 529"). Pure Python; no pandas."""

import math

NAME_WIDTH = 70


def dur(ns):
    """ns as the report writes durations (src/present/report/summary_text.c)."""
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "-"
    ns = int(ns)
    if ns < 0:
        return "-" + dur(-ns)
    if ns >= 1000000000:
        return "%.3f s" % (ns / 1e9)
    if ns >= 1000000:
        return "%.2f ms" % (ns / 1e6)
    if ns >= 1000:
        return "%.2f us" % (ns / 1e3)
    return "%d ns" % ns


def size(nbytes):
    if nbytes is None or (isinstance(nbytes, float) and math.isnan(nbytes)):
        return "-"
    nbytes = int(nbytes)
    if nbytes < 1024:
        return "%d B" % nbytes
    v, unit = nbytes / 1024.0, 0
    units = ("KiB", "MiB", "GiB", "TiB")
    while v >= 1024.0 and unit < 3:
        v /= 1024.0
        unit += 1
    return ("%.2f %s" if v < 10 else "%.1f %s") % (v, units[unit])


def count(n):
    return "{:,}".format(int(n)).replace(",", " ")


def pct(part, whole):
    return "%.1f %%" % (100.0 * part / whole) if whole else "-"


def cut(text, width=NAME_WIDTH):
    text = "" if text is None else str(text)
    return text if len(text) <= width else text[:width - 3] + "..."


def table(headers, rows, left=(0,), indent="  "):
    """Lines of a table: columns in `left` (indexes) left-aligned, the
    others right-aligned; every cell a str."""
    if not rows:
        return []
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.ljust(widths[i]) if i in left else c.rjust(widths[i]))
        return indent + "  ".join(out).rstrip()

    return [line(headers)] + [line(r) for r in rows]
