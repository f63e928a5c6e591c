import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { connect } from "@printshop/shared/db";
import { facetRoutes, getByIdRoutes, listRoutes } from "./bench/scale_lists.ts";
import {
  goalOf,
  type OperationResult,
  pairedRatioOf,
  ratioOf,
  scaleOperations,
  shapeProblems,
} from "./bench/scale_report.ts";
import {
  quoteChunks,
  type QuoteSeedOrg,
  seededId,
  seededIdSql,
} from "./bench/scale_seed_quotes.ts";
import { longLedgerRows, MULTIPLES, sizeAt } from "./bench/scale_sizes.ts";

const figures = (rows: number, p50: number) => ({ rows, p50, p99: p50 * 2, samples: 5 });

Deno.test("the lists come from the contracts: paging, sorts, named filters and search", () => {
  const lists = listRoutes();
  const quotes = lists.find((l) => l.path === "/v1/quotes")!;
  assertEquals(quotes.paging, "offset");
  assert(quotes.sortFields.includes("createdAt") && quotes.sortFields.includes("totalIncGst"));
  const status = quotes.named.find((n) => n.name === "status")!;
  assertEquals(status.kind, "enum");
  assert(status.values.includes("draft"));
  assertEquals(quotes.named.find((n) => n.name === "clientId")?.kind, "string");
  assert(quotes.search);
  assertEquals(lists.find((l) => l.path === "/v1/catalogue")?.paging, "cursor");
  assertEquals(lists.find((l) => l.path === "/v1/event-log")?.paging, "feed");
  const ledger = lists.find((l) => l.path.endsWith("/stock-adjustments"))!;
  assertEquals(ledger.pathParams, ["garmentVariantId"]);
  const variants = lists.find((l) => l.path === "/v1/garment-variants")!;
  assertEquals(variants.named.find((n) => n.name === "inStock")?.kind, "boolean");
  // Paging, order, filters and search are never taken for named filters.
  for (const list of lists) {
    for (const name of ["limit", "offset", "cursor", "after", "sortField", "filters", "search"]) {
      assert(!list.named.some((n) => n.name === name), `${list.path} names ${name}`);
    }
  }
  const gets = getByIdRoutes(lists).map((g) => g.path);
  assert(gets.includes("/v1/quotes/{quoteId}") && gets.includes("/v1/customers/{customerId}"));
  assert(!gets.includes("/v1/tasks/{taskId}/extras"));
  assert(facetRoutes().includes("/v1/quotes/facets"));
});

Deno.test("goals: 1.3, 2 for facets and search, none for far pages and growing counted pages", () => {
  const result = (
    kind: OperationResult["kind"],
    counted: boolean,
    rows: [number, number],
  ): OperationResult => ({
    name: "x",
    kind,
    counted,
    sizes: [figures(rows[0], 10), figures(rows[1], 12)],
  });
  assertEquals(goalOf(result("get", false, [10, 100])).goal, 1.3);
  assertEquals(goalOf(result("write", false, [10, 100])).goal, 1.3);
  assertEquals(goalOf(result("cursor-last", false, [10, 100])).goal, 1.3);
  // A search is held to 2, unless it is counted and its matches grow (as a first page).
  assertEquals(goalOf(result("search", true, [10, 10])).goal, 2);
  assertEquals(goalOf(result("search", false, [10, 100])).goal, 2);
  assertEquals(goalOf(result("search", true, [10, 100])).goal, null);
  assertEquals(goalOf(result("facets", false, [10, 100])).goal, 2);
  assertEquals(goalOf(result("offset-far", false, [10, 100])).goal, null);
  // An offset list's first page: its count is the cost only when the matches grow.
  assertEquals(goalOf(result("first-page", true, [10, 100])).goal, null);
  assertEquals(goalOf(result("first-page", true, [10, 10])).goal, 1.3);
  assertEquals(goalOf(result("first-page", false, [10, 100])).goal, 1.3);
  assertEquals(ratioOf([figures(1, 10), figures(3, 11), figures(10, 15)]), 1.5);
  assertEquals(ratioOf([figures(1, NaN), figures(10, 15)]), null);
});

Deno.test("the paired ratio takes the machine's pace out: the paired read's own ratio", () => {
  const paced = (rows: number, p50: number, pairedP50: number) => ({
    ...figures(rows, p50),
    pairedP50,
  });
  // The machine 1.5 times slower at ×10: an operation 1.5 times slower did not grow.
  assertEquals(pairedRatioOf([paced(1, 4, 2), paced(3, 5, 2.5), paced(10, 6, 3)]), 1);
  assertEquals(pairedRatioOf([paced(1, 4, 2), paced(10, 12, 2)]), 3);
  assertEquals(pairedRatioOf([figures(1, 4), figures(10, 6)]), null);
  const { details } = scaleOperations([{
    name: "GET /v1/x",
    kind: "get",
    counted: false,
    sizes: [paced(1, 4, 2), paced(10, 6, 3)],
  }]);
  assertEquals([details[0]!.met, details[0]!.pairedRatio, details[0]!.metPaired], [
    false,
    1,
    true,
  ]);
});

Deno.test("the JSON has exactly the issue's shape, and a wrong one is told apart", () => {
  const { operations, details } = scaleOperations([{
    name: "GET /v1/quotes/{quoteId}",
    kind: "get",
    counted: false,
    sizes: [figures(1, 2), figures(3, 2.2), { ...figures(10, NaN), error: "boom", samples: 0 }],
  }]);
  assertEquals(shapeProblems({ operations, extra: true }, 3), []);
  assertEquals(operations[0]!.sizes[2], { rows: 10, p50: null, p99: null });
  assertEquals(details[0]!.sizes[2]!.error, "boom");
  assert(shapeProblems({ operations: [{ name: "x", goal: 1, ratio: 1 }] }, 3).length > 0);
  assert(shapeProblems({}, 3).length > 0);
});

Deno.test("sizes shrink by the factor, and the long ledger holds what the others do not", () => {
  const [x1, , x10] = MULTIPLES.map((m) => sizeAt(m, 1));
  assertEquals([x1!.quotes, x10!.quotes, x1!.otherOrganizations], [10_000, 100_000, 1_000]);
  assertEquals([x1!.variants, x10!.variants, x10!.ledgerRows], [10_000, 100_000, 1_000_000]);
  assertEquals(x1!.tierBlock, x10!.tierBlock);
  assertEquals(longLedgerRows(x1!), 100_000 - 9 * 9_999);
  const tiny = sizeAt(10, 0.001);
  assert(tiny.quotes === 100 && tiny.otherOrganizations === 1 && longLedgerRows(tiny) >= 1);
});

Deno.test("quote chunks cover every organisation's range once, none larger than asked", () => {
  const org = (id: string, firstN: number, lastN: number): QuoteSeedOrg => ({
    organizationId: id,
    garmentGroupId: id,
    taxRateId: id,
    taxName: "GST",
    taxRatePct: 10,
    firstN,
    lastN,
    customers: 0,
    stepSeconds: 1,
    spanN: lastN,
  });
  const chunks = quoteChunks([org("a", 1, 25), org("b", 1, 10), org("c", 5, 7)], 12);
  assert(chunks.every((c) => c.reduce((n, o) => n + o.lastN - o.firstN + 1, 0) <= 12));
  const covered = chunks.flat().map((o) => `${o.organizationId}:${o.firstN}-${o.lastN}`);
  assertEquals(covered, ["a:1-12", "a:13-24", "a:25-25", "b:1-10", "c:5-5", "c:6-7"]);
});

Deno.test("a seeded id computed here is the one the seed's SQL gives", async () => {
  const url = Deno.env.get("TEST_DATABASE_URL");
  if (!url) return; // run by `deno task test`, which starts a cluster
  const sql = connect(url, { schema: "public", max: 1 });
  try {
    const org = "0193a1b2-4c5f-7081-8b12-3d4e5f607182";
    const [row] = await sql.unsafe<{ id: string }[]>(
      `SELECT ${seededIdSql(`'${org}'::uuid`, "quote", "12345")} AS id`,
    );
    assertEquals(row!.id, seededId(org, "quote", 12345));
    assert(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/.test(row!.id));
  } finally {
    await sql.end();
  }
});

Deno.test("the whole bench at a tiny factor writes every operation with samples at 3 sizes, and the ratios part after", async () => {
  const dir = await Deno.makeTempDir({ prefix: "printshop-bench-scale-test-" });
  const out = `${dir}/scale.json`;
  try {
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./bench_scale.ts", import.meta.url).pathname],
      env: {
        BENCH_SCALE_FACTOR: "0.001",
        BENCH_SCALE_SAMPLES: "1",
        BENCH_SCALE_WARMUP: "0",
        BENCH_SCALE_OUT: out,
        // The ratios part runs too, a second per target: it breaks when the product's tables
        // change in a way its floors cannot copy.
        BENCH_DURATION_S: "1",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    const said = decoder.decode(run.stdout) + decoder.decode(run.stderr);
    assert(run.success, `bench:scale exited ${run.code}:\n${said.slice(-4000)}`);
    const report = JSON.parse(await Deno.readTextFile(out)) as {
      operations: { name: string; sizes: { p50: number | null }[] }[];
      details: {
        name: string;
        pairedRatio: number | null;
        sizes: { samples: number; pairedP50?: number; error?: string }[];
      }[];
      ratiosAtLargest: { goals: unknown[]; otherRatios: { figure: string }[] } | null;
    };
    assertEquals(shapeProblems(report, MULTIPLES.length), []);
    const names = report.operations.map((o) => o.name);
    for (
      const wanted of [
        "GET /v1/quotes?limit=20",
        "GET /v1/quotes?limit=20&search={clientName}",
        "GET /v1/quotes/facets",
        "GET /v1/catalogue?limit=200&cursor={last page}",
        "GET /v1/quotes/{quoteId}",
        "DELETE /v1/customers/{customerId}",
        "POST /v1/customers/bulk/tier (10,000 customers by a tier filter)",
        "POST /v1/garment-variants/{long-ledger variant}/stock-adjustments",
      ]
    ) {
      assert(names.includes(wanted), `no operation "${wanted}"`);
    }
    assert(names.some((n) => n.includes("webhook deliveries")), "no fan-out");
    for (const [i, op] of report.operations.entries()) {
      const detail = report.details[i]!;
      assertEquals(detail.name, op.name);
      for (const [s, size] of op.sizes.entries()) {
        assert(
          typeof size.p50 === "number" && detail.sizes[s]!.samples > 0,
          `${op.name} at size ${s}: ${detail.sizes[s]!.error ?? "no samples"}`,
        );
        assert(detail.sizes[s]!.pairedP50! > 0, `${op.name} at size ${s}: no paired read`);
      }
    }
    assert(report.ratiosAtLargest, `the ratios part did not run:\n${said.slice(-4000)}`);
    assert(report.ratiosAtLargest.goals.length > 0);
    assert(
      report.ratiosAtLargest.otherRatios.some((r) => r.figure.includes("as first defined")),
      "no ratio against the floors as first defined",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
