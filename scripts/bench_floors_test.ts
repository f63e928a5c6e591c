import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { floorIndexes } from "./bench_floors.ts";
import { formatGoal, goal, metText, withinLimit } from "./bench/goals.ts";
import { loadFigures } from "./bench/load.ts";
import { parseProcStat, parseRssParts, parseVmRssMb } from "./bench/proc.ts";
import { countLoggedStatements, netPerRequest } from "./bench/ratios_diagnostics.ts";
import { cpuMsPerRequest } from "./bench/stack_cpu.ts";
import { percentile } from "./bench/stats.ts";

Deno.test("percentile answers the nearest rank, so p99 of 100 samples is the 99th", () => {
  const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
  assertEquals(percentile(sorted, 0.5), 50);
  assertEquals(percentile(sorted, 0.99), 99);
  assertEquals(percentile(sorted, 1), 100);
  assertEquals(percentile([7], 0.99), 7);
  assertEquals(percentile([], 0.5), NaN);
});

Deno.test("loadFigures counts answers over wall time and sorts before taking percentiles", () => {
  const figures = loadFigures([3, 1, 2, 4], 2, 16, { "500": 1 });
  assertEquals(figures.requests, 4);
  assertEquals(figures.requestsPerSecond, 2);
  assertEquals(figures.p50Ms, 2);
  assertEquals(figures.p99Ms, 4);
  assertEquals(figures.maxMs, 4);
  assertEquals(figures.failures, { "500": 1 });
});

Deno.test("goal compares product ÷ floor with the issue's bound, both ways", () => {
  const create = goal("create", 600, 1000, "≥", 0.5);
  assertEquals([create.ratio, create.met], [0.6, true]);
  assertEquals(goal("create", 400, 1000, "≥", 0.5).met, false);
  assertEquals(goal("p99", 40, 10, "≤", 4).met, true);
  assertEquals(goal("p99", 41, 10, "≤", 4).met, false);
  // A floor that measured nothing never makes a goal met.
  assertEquals(goal("create", 600, 0, "≥", 0.5).met, false);
  assertEquals(goal("p99", NaN, 10, "≤", 4).met, false);
});

Deno.test("goals and limits print as the issue writes them", () => {
  assertEquals(formatGoal({ comparator: "≥", target: 0.8 }), "≥ 0.80");
  assertEquals(formatGoal({ comparator: "≤", target: 4 }), "≤ 4.00");
  assertEquals([metText(true), metText(false)], ["met", "not met"]);
  assertEquals(withinLimit(80, 80), true);
  assertEquals(withinLimit(80.1, 80), false);
  assertEquals(withinLimit(null, 80), false);
});

Deno.test("parseProcStat reads utime+stime and the parent past a command name with spaces", () => {
  const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
  fields[4 - 3] = "4242"; // ppid
  fields[14 - 3] = "120"; // utime
  fields[15 - 3] = "30"; // stime
  fields[16 - 3] = "7"; // cutime
  fields[17 - 3] = "3"; // cstime
  const stat = parseProcStat(`1234 (postgres: quotes (x) idle) ${fields.join(" ")}`);
  assertEquals(stat, { ppid: 4242, ticks: 150, childTicks: 10 });
});

Deno.test("parseVmRssMb reads VmRSS in MB, null without it", () => {
  assertEquals(parseVmRssMb("Name:\tdeno\nVmPeak:\t  999 kB\nVmRSS:\t   81920 kB\n"), 80);
  assertEquals(parseVmRssMb("Name:\tkthreadd\nState:\tS (sleeping)\n"), null);
});

Deno.test("countLoggedStatements counts each statement once, by application and keyword", () => {
  const log = [
    "ratios|quotes|LOG:  statement: begin",
    "ratios|quotes|LOG:  execute s1: ",
    "      INSERT INTO quotes (id) VALUES ($1)",
    "ratios|quotes|DETAIL:  Parameters: $1 = 'x'",
    "ratios|quotes|LOG:  execute <unnamed>: SELECT 1",
    "ratios|quotes|LOG:  statement: commit",
    "ratios|eventbus|LOG:  execute s2: WITH claimed AS (SELECT 1) SELECT * FROM claimed",
    "ratios||LOG:  statement: SELECT pg_reload_conf()",
    "2026-01-01 LOG:  checkpoint starting: time",
  ].join("\n");
  assertEquals(countLoggedStatements(log), {
    quotes: { BEGIN: 1, INSERT: 1, SELECT: 1, COMMIT: 1 },
    eventbus: { WITH: 1 },
    "(none)": { SELECT: 1 },
  });
});

Deno.test("netPerRequest takes off each application's idle rate, scaled to the window", () => {
  const net = netPerRequest(
    { quotes: { BEGIN: 22, INSERT: 20 }, eventbus: { SELECT: 3 } },
    { quotes: { BEGIN: 1 }, eventbus: { SELECT: 1 } },
    1, // baseline seconds
    2, // window seconds
    20,
  );
  // quotes: BEGIN (22 − 2) / 20 = 1, INSERT 1; eventbus: (3 − 2) / 20 = 0.05.
  assertEquals(net, {
    quotes: { total: 2, BEGIN: 1, INSERT: 1 },
    eventbus: { total: 0.05, SELECT: 0.05 },
  });
  // An application that only polled, as often as when idle, is left out.
  assertEquals(netPerRequest({ crm: { BEGIN: 2 } }, { crm: { BEGIN: 1 } }, 1, 2, 20), {});
});

Deno.test("cpuMsPerRequest divides each process's CPU, the cluster summed as postgres", () => {
  assertEquals(
    cpuMsPerRequest({ gateway: 1.5, quotes: 3, "pg:quotes": 2, "pg:walwriter": 0.1 }, 2.5, 1000),
    { gateway: 1.5, quotes: 3, postgres: 2.5 },
  );
});

Deno.test("floorIndexes copies the quotes indexes onto a floor table, the search index too", () => {
  const search = "USING gin ((((COALESCE(quote_ref, ''::text) || ' '::text) || " +
    "COALESCE(reference, ''::text))) printshop_extensions.gin_trgm_ops)";
  const definitions = [
    "CREATE UNIQUE INDEX quotes_pkey ON quotes.quotes USING btree (id)",
    "CREATE INDEX quotes_by_org ON quotes.quotes USING btree (organization_id, created_at, id)",
    `CREATE INDEX quotes_search ON quotes.quotes ${search}`,
  ];
  assertEquals(floorIndexes(definitions, "written"), [
    "CREATE UNIQUE INDEX ON bench_floors.written USING btree (id)",
    "CREATE INDEX ON bench_floors.written USING btree (organization_id, created_at, id)",
    `CREATE INDEX ON bench_floors.written ${search}`,
  ]);
  // An index over a function of the whole row would be the floor's own function: refused, as is
  // an index of another table.
  assert.throws(
    () =>
      floorIndexes([
        "CREATE INDEX quotes_search ON quotes.quotes USING gin " +
        "(quotes.quotes_search_text(quotes.*) printshop_extensions.gin_trgm_ops)",
      ], "written"),
    /cannot copy/,
  );
  assert.throws(
    () => floorIndexes(["CREATE INDEX x ON quotes.quote_lines USING btree (id)"], "written"),
    /cannot copy/,
  );
});

Deno.test("parseRssParts reads file-backed, anonymous and malloc heap pages in MB", () => {
  const status = "Name:\tdeno\nVmRSS:\t  4096 kB\nRssAnon:\t   2048 kB\nRssFile:\t   1536 kB\n" +
    "RssShmem:\t     512 kB\n";
  const smaps = [
    "55d0c0000000-55d0c4000000 rw-p 00000000 00:00 0                          [heap]",
    "Size:              65536 kB",
    "Rss:               1024 kB",
    "7f0000000000-7f0000100000 rw-p 00000000 00:00 0 ",
    "Rss:                512 kB",
    "7f0000200000-7f0000300000 r-xp 00000000 08:01 42                         /usr/bin/deno",
    "Rss:                256 kB",
  ].join("\n");
  assertEquals(parseRssParts(status, smaps), { fileMb: 2, anonMb: 2, mallocHeapMb: 1 });
  assertEquals(parseRssParts("VmRSS:\t 1 kB\n", smaps), null);
});
