"""The tables `python -m bench` prints, the goals they are judged against, and the JSON file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("results")
KB = 1024


def spread_text(figure: dict[str, float], digits: int = 2) -> str:
    """A median with its range: `1.23 (1.10–1.40)`."""
    return (f"{figure['median']:.{digits}f} ({figure['min']:.{digits}f}–"
            f"{figure['max']:.{digits}f})")


def table(title: str, header: list[str], rows: list[list[str]]) -> str:
    """A plain-text table with the first column left-aligned and the others right-aligned."""
    widths = [max(len(str(line[i])) for line in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(str(cell).ljust(widths[0]) if i == 0 else str(cell).rjust(widths[i])
                         for i, cell in enumerate(cells))

    return "\n".join([title, line(header), line(["-" * w for w in widths]),
                      *[line(row) for row in rows], ""])


def plan_lines(plan: dict[str, Any]) -> list[str]:
    """A search's plan as printed: SQLite's FTS5 query (one conjunction a line), then the
    database's steps (PostgreSQL's EXPLAIN says how it reads the terms)."""
    if not plan["steps"]:
        return ["  (nothing can match: nothing is read)"]
    conjunctions = plan["match"].split(" OR ") if plan["match"] else []
    return ([f"  match  {conjunction}" for conjunction in conjunctions]
            + [f"  plan   {step}" for step in plan["steps"]])


def matrix_tables(matrix: dict[str, Any]) -> str:
    """8: every cell of the search matrix as p50 ÷ /health p50, then the worst cell's plan."""
    columns = list(matrix["filterSets"])
    cells = {(cell["query"], cell["filters"]): cell["overHealth"] for cell in matrix["cells"]}
    worst = matrix["worst"]
    again = matrix["measuredAgain"]
    rows = []
    for query in [*matrix["queries"], *matrix["references"]]:
        row = [f"{query['name']}: {query['text']}".rstrip(": ")]
        for column in columns:
            figure = cells[query["name"], column]["median"]
            marked = (query["name"], column) == (worst["query"], worst["filters"])
            row.append(("► " if marked else "") + f"{figure:.2f}")
        rows.append(row)
    words = "; ".join(f"{band}: {', '.join(found)}" for band, found in matrix["words"].items())
    filters = "; ".join(f"{name} = {', '.join(f'{k}={v}' for k, v in chosen.items()) or '—'}"
                        for name, chosen in matrix["filterSets"].items())
    lines = [table(
        "9. Search matrix (100 000 events, gunicorn 2 workers, concurrency 1): each cell's p50 "
        "÷ the p50 of /health timed alternately with it (/health p50 "
        f"{spread_text(matrix['healthP50Ms'])} ms), median of the rounds",
        ["words (band: text)", *columns], rows),
        f"Words by share of upcoming events: {words}.",
        f"Filters: {filters}.",
        f"Worst cell: {worst['query']} “{worst['text']}” with {worst['filters']}: "
        f"{spread_text(worst['overHealth'])}× /health; median of the "
        f"{len(matrix['queries']) * len(columns)} cells: {matrix['median']:.2f}× (references "
        "left out).",
        f"The {len(again['cells'])} worst cells measured again, {again['samples']} fresh pairs "
        "each alternating with /health (the figure the goal is judged on): worst "
        f"{again['worst']['overHealth']:.2f}× ({again['worst']['query']} with "
        f"{again['worst']['filters']}); "
        + ", ".join(f"{cell['overHealth']:.2f}" for cell in
                    sorted(again["cells"], key=lambda cell: -cell["overHealth"])) + ".",
        f"Storage in-process: median {matrix['storage']['medianMs']:.3f} ms, slowest "
        f"{matrix['storage']['slowest']['ms']:.3f} ms ({matrix['storage']['slowest']['query']} "
        f"with {matrix['storage']['slowest']['filters']}).",
        f"Its plan ({worst['plan']['storageP50Ms']:.3f} ms in storage, in-process):",
        *plan_lines(worst["plan"]), ""]
    return "\n".join(lines)


def goals(results: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """Each goal of the issue: what it asks, the figure measured, and whether it is met."""
    matrix = results["matrix"]
    worst = matrix["measuredAgain"]["worst"]["overHealth"]
    checks = [
        ("search matrix, worst cell (the 10 worst measured again): c1 p50 ≤ 2.5× /health",
         f"{worst:.2f}×", worst <= 2.5),
        ("search matrix, median cell: c1 p50 ≤ 2.5× /health", f"{matrix['median']:.2f}×",
         matrix["median"] <= 2.5),
    ]
    for row in results["framework"]:
        if row["endpoint"].startswith("JSON, rare") or row["endpoint"].startswith("JSON, common"):
            ratio = row["c8"]["p50OverHealth"]["median"]
            checks.append((f"{row['endpoint']}: c8 p50 ≤ 2.5× /health", f"{ratio:.2f}×",
                           ratio <= 2.5))
    for row in results["growth"]:
        ratio = row["growth"]["median"]
        checks.append((f"{row['endpoint']}: 1k→100k p50 < 2×", f"{ratio:.2f}×", ratio < 2))
    sizes = results["bytes"]
    checks.append(("JSON answer for 10 results < 4 KB", f"{sizes['jsonTenResults']} B",
                   sizes["jsonTenResults"] < 4 * KB))
    checks.append(("/zh-TW/events page with its own CSS/JS < 15 KB as served (htmx excluded)",
                   f"{sizes['pageWithOwnAssetsServed']} B",
                   sizes["pageWithOwnAssetsServed"] < 15 * KB))
    visit = sizes["firstVisit"]
    checks.append(("first visit to /zh-TW/events < 35 KB on the wire in ≤ 4 requests",
                   f"{visit['wireBytes']} B in {visit['requests']}",
                   visit["wireBytes"] < 35 * KB and visit["requests"] <= 4))
    for row in results["timeToTools"][1:]:
        ratio = row["readyOverBaseline"]["median"]
        checks.append((f"tools of {row['page']} registered ≤ 1.2× the one-form page",
                       f"{ratio:.2f}×", ratio <= 1.2))
    for row in results["roundTrip"]:
        for moment, when in (("repeated", "repeated calls"), ("first", "first call")):
            ratio = row["js-on"][moment]["overFloor"]["median"]
            checks.append((f"{row['call']}, JS on, {when} ≤ 2× its floor", f"{ratio:.2f}×",
                           ratio <= 2))
    writes = results["writes"]["contended"]
    checks.append(("seats never oversold", "yes" if writes["neverOversold"] else "NO",
                   writes["neverOversold"]))
    checks.append(("every seat sold, each to a client told 201", "yes" if writes["soldOut"]
                   else "NO", writes["soldOut"]))
    return checks


def time_to_tools_table(rows: list[dict[str, Any]]) -> str:
    """Table 6: from navigation start until every tool of the page is registered."""
    return table("6. Time to tools (ms from navigation start; 10 cold loads each, "
                 "interleaved with the baseline; forms alone = the page's tool forms on a page "
                 "of their own, answered by the browser)",
                 ["page", "tools", "ready", "÷ baseline", "forms alone", "÷ baseline",
                  "HTML first byte", "HTML last byte"],
                 [[row["page"], ", ".join(row["tools"]), spread_text(row["readyMs"], 0),
                   spread_text(row["readyOverBaseline"], 2),
                   spread_text(row["formsAloneMs"], 0) if "formsAloneMs" in row else "",
                   (spread_text(row["formsAloneOverBaseline"], 2)
                    if "formsAloneOverBaseline" in row else ""),
                   spread_text(row["responseStartMs"], 0), spread_text(row["responseEndMs"], 0)]
                  for row in rows])


def round_trip_table(rows: list[dict[str, Any]]) -> str:
    """Table 7: each call's round trip, first and repeated, JavaScript on and off, vs. floor."""
    body = []
    for row in rows:
        for moment in ("first", "repeated"):
            cells = [row["call"] if moment == "first" else "", moment,
                     spread_text(row["floor"][moment]["ms"], 1)]
            for variant in ("js-on", "js-off"):
                cells += [spread_text(row[variant][moment]["ms"], 1),
                          spread_text(row[variant][moment]["overFloor"], 1)]
            body.append(cells)
    return table("8. An agent's call, round trip (ms from WebMCP.invokeTool to toolResponded; "
                 "floor = the same form alone, answered by respondWith(fetch) as JSON)",
                 ["call", "", "floor", "JS on", "÷ floor", "JS off", "÷ floor"], body)


def lighthouse_table(rows: list[dict[str, Any]]) -> str:
    """Table 11: Lighthouse's performance score and its metrics, page by page, as a phone and
    as a desktop, after the smallest page in the same form factor."""
    return table("11. Lighthouse performance (one run each, throttling simulated: mobile = a "
                 "slow phone on a slow 4G network, desktop = its preset; ms; LCP ÷ baseline = "
                 "the page's largest contentful paint over the smallest page's)",
                 ["page", "form factor", "score", "FCP", "LCP", "TBT", "CLS", "Speed Index",
                  "LCP ÷ baseline"],
                 [[row["page"], row["formFactor"], row["score"], f"{row['fcpMs']:.0f}",
                   f"{row['lcpMs']:.0f}", f"{row['tbtMs']:.0f}", f"{row['cls']:.3f}",
                   f"{row['speedIndexMs']:.0f}", f"{row['lcpOverBaseline']:.2f}"]
                  for row in rows])


def render(results: dict[str, Any]) -> str:
    """Every table, in the order of the issue."""
    settings = results["settings"]
    out = [f"webmcp-events benchmarks · {results['machine']['when']} · "
           f"{results['machine']['cpus']} CPUs · load {results['machine']['loadBefore']} before, "
           f"{results['machine']['loadAfter']} after · median (min–max) of "
           f"{settings['rounds']} interleaved rounds of {settings['seconds']} s\n"]
    rows = []
    for row in results["framework"]:
        cells = [row["endpoint"]]
        for c in ("c1", "c8"):
            cells += [spread_text(row[c]["p50Ms"]), f"{row[c]['p95Ms']['median']:.2f}",
                      f"{row[c]['requestsPerSecond']['median']:.0f}",
                      spread_text(row[c]["p50OverHealth"])]
        rows.append(cells)
    out.append(table("1. Search vs. the framework floor (100 000 events, gunicorn 2 workers; "
                     "ms; ratio = p50 ÷ /health p50 in the same round)",
                     ["request", "c1 p50", "c1 p95", "c1 req/s", "c1 ×health",
                      "c8 p50", "c8 p95", "c8 req/s", "c8 ×health"], rows))
    out.append(table("2. Search vs. the storage floor (the same query in-process; ms)",
                     ["request", "storage p50", "server c1 p50", "server ÷ storage"],
                     [[row["endpoint"], spread_text(row["storage"]["rawP50Ms"], 3),
                       spread_text(row["c1"]["p50Ms"]),
                       spread_text(row["storage"]["serverP50OverRaw"], 1)]
                      for row in results["framework"] if "storage" in row]))
    sizes_seen = list(results["growth"][0]["p50Ms"])
    out.append(table("3. Growth: p50 at concurrency 1 (ms) by number of events",
                     ["request", *[f"{int(s):,} events" for s in sizes_seen],
                      f"{int(sizes_seen[-1]):,} ÷ {int(sizes_seen[0]):,}"],
                     [[row["endpoint"], *[spread_text(row["p50Ms"][s]) for s in sizes_seen],
                       spread_text(row["growth"])] for row in results["growth"]]))
    writes = results["writes"]["contended"]
    out.append(table(f"4. Writes under contention ({writes['visitors']} visitors per event "
                     f"confirm at once, {writes['clients']} in flight, gunicorn 4 workers)",
                     ["event", "seats", "created", "conflicts", "other", "conf/s", "p50 ms",
                      "p95 ms", "oversold", "sold out"],
                     [[r["event"], r["seats"], r["created"], r["conflicts"], r["other"],
                       f"{r['perSecond']:.0f}", f"{r['p50Ms']:.1f}", f"{r['p95Ms']:.1f}",
                       "yes" if r["oversold"] else "no", "yes" if r["soldOut"] else "no"]
                      for r in writes["runs"]]))
    sizes = results["bytes"]
    byte_rows = [["JSON answer, 10 results", sizes["jsonTenResults"], "", "", ""]]
    for name in ("page", "partial"):
        entry = sizes[name]
        byte_rows.append([f"/events {name}", entry["raw"], entry["gzip"], entry["served"],
                          entry["contentEncoding"]])
    for path, entry in sizes["assets"].items():
        byte_rows.append([path, entry["raw"], entry["gzip"], entry["served"],
                          f"{entry['contentEncoding']}, {entry['cacheControl']}"])
    visit = sizes["firstVisit"]
    byte_rows.append(["/events page + own CSS/JS as served (no htmx)", "", "",
                      sizes["pageWithOwnAssetsServed"], ""])
    byte_rows.append([f"first visit: {visit['requests']} requests, on the wire", "", "",
                      visit["wireBytes"], "headers included"])
    out.append(table("5. Bytes", ["what", "raw", "gzip -6", "served", "encoding, caching"],
                     byte_rows))
    out.append(time_to_tools_table(results["timeToTools"]))
    deep = results["pages"]
    last = deep["lastPage"]
    out.append(table(f"7. Deep pages (100 000 events, concurrency 1; ms): page 1 and page {last}, "
                     f"the last one a search shows (page {last + 1} and on answer "
                     "invalid_input)",
                     ["search", "page 1 p50", f"page {last} p50", f"page {last} ÷ page 1"],
                     [[("► " if row["search"] == deep["costliest"] else "") + row["search"],
                       spread_text(row["firstPageP50Ms"]), spread_text(row["lastPageP50Ms"]),
                       spread_text(row["lastOverFirst"], 1)] for row in deep["rows"]]))
    out.append(round_trip_table(results["roundTrip"]))
    out.append(matrix_tables(results["matrix"]))
    plans = ["Query plans at 100 000 events (what each search matches in the index, then "
             "EXPLAIN QUERY PLAN)"]
    for entry in results["plans"]:
        plans += [entry["path"], *plan_lines(entry)]
    out.append("\n".join(plans) + "\n")
    if "postgresql" in results:
        from .backends import side_by_side

        out.append(side_by_side({"SQLite": {"matrix": results["matrix"],
                                            "writes": results["writes"]},
                                 "PostgreSQL": results["postgresql"]}))
    if "lighthouse" in results:
        out.append(lighthouse_table(results["lighthouse"]))
    if "mail" in results:
        from .mail import tables as mail_tables

        out.append(mail_tables(results["mail"]))
    out.append(table("Goals", ["goal", "measured", "met"],
                     [[goal, figure, "yes" if met else "NO"]
                      for goal, figure, met in goals(results)]))
    return "\n".join(out)


def save(results: dict[str, Any]) -> Path:
    """Write the figures to bench/results/latest.json; returns its path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "latest.json"
    path.write_text(json.dumps({**results, "goals": [
        {"goal": goal, "measured": figure, "met": met} for goal, figure, met in goals(results)]},
        indent=2) + "\n")
    return path
