/**
 * The CRM's search functions (migrations 0006 and 0007): each column a list's `search` promises is
 * searched, only the organisation in force is answered, in a big shop the trigram index is read,
 * and it is asked for the rarest piece of a term whose other words every row holds (platform
 * migration 0004).
 */
import assert from "node:assert/strict";
import {
  assertSearchFunction,
  nodesOf,
  type PlanNode,
  scansOf,
  searchPlans,
  serviceHarness,
} from "@printshop/shared/testing";
import { transaction } from "@printshop/shared/db";
import { escapeLike } from "@printshop/shared/filters";
import { withOrganization } from "@printshop/shared/db/tenancy";
import { crmService } from "./app.ts";

const BIG = 20_000;
const SMALL = 300;
const SHOPS = 30;

Deno.test("search functions: customers, vendors and tasks by every searched column, one shop's", async () => {
  await using h = await serviceHarness(crmService);
  const big = crypto.randomUUID();
  const others = Array.from({ length: SHOPS }, () => crypto.randomUUID());
  const shops = [{ id: big, n: BIG }, ...others.map((id) => ({ id, n: SMALL }))];
  for (const { id, n } of shops) {
    // Every searched column holds a text of its own per row: `<column>-<row>-x`.
    await h.sql`
      INSERT INTO customers (id, organization_id, company_name, email, phone, tax_number, tags)
      SELECT gen_random_uuid(), ${id}, 'company-' || g || '-x', 'email-' || g || '-x@shop.test',
        'phone-' || g || '-x', 'tax-' || g || '-x', ARRAY['tag', 'tag-' || g || '-x']
      FROM generate_series(1, ${n}) g`;
    await h.sql`
      INSERT INTO vendors (id, organization_id, name, kind, account_number, notes)
      SELECT gen_random_uuid(), ${id}, 'vendor-' || g || '-x', 'Other', 'account-' || g || '-x',
        'notes-' || g || '-x'
      FROM generate_series(1, ${n}) g`;
    await h.sql`
      INSERT INTO tasks (id, organization_id, title, description)
      SELECT gen_random_uuid(), ${id}, 'title-' || g || '-x', 'description-' || g || '-x'
      FROM generate_series(1, ${n}) g`;
  }
  await h.sql`ANALYZE customers, vendors, tasks`;
  const orgs = { big, other: others[0]! };
  const schema = crmService.service;
  const row = 123;
  const terms = (...columns: string[]) => columns.map((c) => `${c}-${row}-x`);
  await assertSearchFunction(h, schema, orgs, {
    fn: "customers_matching",
    table: "customers",
    index: "customers_search",
    terms: terms("company", "email", "phone", "tax", "tag"),
  });
  await assertSearchFunction(h, schema, orgs, {
    fn: "vendors_matching",
    table: "vendors",
    index: "vendors_search",
    terms: terms("vendor", "account", "notes"),
  });
  await assertSearchFunction(h, schema, orgs, {
    fn: "tasks_matching",
    table: "tasks",
    index: "tasks_search",
    terms: terms("title", "description"),
  });
});

/** The blocks a node read, from the cache and from disk. */
const blocksOf = (n: PlanNode): number =>
  (n["Shared Hit Blocks"] ?? 0) + (n["Shared Read Blocks"] ?? 0);

/**
 * The blocks the plans read through `index`, less what the values worked out once read (the
 * piece to ask for is one, worked out as the index scan starts, so its reads count in the scan's).
 */
function blocksThrough(plans: readonly PlanNode[], index: string): number {
  const nodes = plans.filter((p) => nodesOf(p).some((n) => n["Index Name"] === index))
    .flatMap(nodesOf);
  const sum = (ns: PlanNode[]) => ns.reduce((total, n) => total + blocksOf(n), 0);
  return sum(nodes.filter((n) => n["Index Name"] === index)) -
    sum(nodes.filter((n) => n["Parent Relationship"] === "InitPlan"));
}

Deno.test("search functions ask the index for a term's rarest piece and check the whole term", async () => {
  await using h = await serviceHarness(crmService);
  const big = crypto.randomUUID();
  const other = crypto.randomUUID();
  // Titles as a seed writes them: "Scale task <n>", every row sharing "Scale task ", a third
  // with the same description. "1000" is in 11 of the big shop's (1000, 10000–10009).
  for (const [id, n] of [[big, 20_000], [other, 2_000]] as const) {
    await h.sql`
      INSERT INTO tasks (id, organization_id, title, description)
      SELECT gen_random_uuid(), ${id}, 'Scale task ' || g,
        CASE WHEN g % 3 = 0 THEN 'Seeded by the bench' END
      FROM generate_series(1, ${n}::int) g`;
  }
  // Texts with what a pattern escapes, and the same texts with the escapes' characters replaced.
  await h.sql`
    INSERT INTO tasks (id, organization_id, title, description)
    SELECT gen_random_uuid(), ${big}, t, NULL
    FROM unnest(ARRAY['Print 50% off_sale \\ back 7777', 'Print 50x offXsale X back 7777',
      'Call Ünïcode ΣΟΦΙΑ']) t`;
  // VACUUM too: it moves the index's pending list (rows written since) into the index proper,
  // which every search reads whole, whatever it asks for.
  await h.sql`VACUUM ANALYZE tasks`;
  const asked = async (term: string): Promise<string> => {
    const [row] = await h.sql<{ p: string }[]>`
      SELECT search_index_pattern(${term}, ${`${crmService.service}.tasks_search`}) AS p`;
    return row!.p;
  };
  assert.equal(await asked("%Scale task 1000%"), "%1000%");
  assert.equal(await asked("%SCALE-TASK-1000%"), "%1000%");
  // Every piece common, or one piece that is the whole term: the term as given.
  assert.equal(await asked("%Scale task%"), "%Scale task%");
  assert.equal(await asked("%Scale%"), "%Scale%");
  assert.equal(await asked("%1000%"), "%1000%");
  // Whether a list would walk for a term (platform migration 0005), from the same sample: "Scale
  // task 1" is in 11,111 of the big shop's 20,000 rows, "Scale task 1000" in 11.
  const common = async (term: string, atLeast = 0.05): Promise<boolean> => {
    const [row] = await h.sql<{ common: boolean }[]>`
      SELECT tasks_matching_is_common(${term}, ${atLeast}) AS common`;
    return row!.common;
  };
  assert.equal(await common("%Scale task%"), true);
  assert.equal(await common("%Scale task 1%"), true);
  assert.equal(await common("%Scale task 1%", 0.9), false);
  assert.equal(await common("%Scale task 1000%"), false);
  assert.equal(await common("%nowhere%"), false);

  const found = async (term: string): Promise<string[]> => {
    const rows = await withOrganization(
      big,
      () =>
        transaction(
          h.deps.sql,
          (tx) =>
            tx<{ id: string }[]>`SELECT id FROM tasks_matching(${`%${
              escapeLike(term)
            }%`}) AS m (id)`,
        ),
    );
    return rows.map((r) => r.id).sort();
  };
  const expected = async (term: string): Promise<string[]> => {
    const rows = await h.sql<{ id: string }[]>`
      SELECT id FROM tasks WHERE organization_id = ${big}
        AND (strpos(lower(title), lower(${term})) > 0
          OR strpos(lower(description), lower(${term})) > 0)`;
    return rows.map((r) => r.id).sort();
  };
  // The same answer as the whole term in each column: the piece only chooses where to look.
  for (
    const term of [
      "Scale task 1000",
      "scale TASK 1000",
      "task 1000",
      "k 10001",
      "50% off_sale \\ back 7777",
      "off_sale",
      "% off",
      "k 1",
      "ΣΟΦΙΑ",
      "Ünïcode ΣΟΦ",
    ]
  ) {
    const ids = await found(term);
    assert.deepStrictEqual(ids, await expected(term), `"${term}"`);
    assert(ids.length > 0, `"${term}" finds the big shop's rows`);
  }
  assert.equal((await found("Scale task 1000")).length, 11);
  assert.equal((await found("50% off_sale \\ back 7777")).length, 1, "the escapes are literal");
  // Rows holding the piece but not the term, or the term only across two columns: none.
  assert.deepStrictEqual(await found("task 1000 Scale"), []);
  assert.deepStrictEqual(await found("task 3 Seeded"), []);

  // What the index read: the piece's few trigrams, where the whole term's shared ones are in
  // every row of both shops (as the owner, past the policies, so that it may use the index).
  const narrowedPlans = await searchPlans(
    h.databaseUrl,
    crmService.service,
    big,
    "tasks_matching",
    "Scale task 1000",
    { analyze: true },
  );
  const narrowed = blocksThrough(narrowedPlans, "tasks_search");
  // The piece's statistics are read by name through the catalogue's indexes: pg_stats worked
  // out whole (joined to it by name) cost 19 ms a search at x10.
  const wholeCatalogue = narrowedPlans.flatMap(scansOf)
    .filter((scan) =>
      scan.type === "Seq Scan" && /^pg_(statistic|attribute|class)$/.test(scan.table)
    );
  assert.deepStrictEqual(wholeCatalogue, [], "the piece's statistics read a catalogue whole");
  // A term with no run of three letters or digits has no trigram to ask the index for: its
  // branch is planned with the pattern in sight, so PostgreSQL prices a read of the whole index
  // (every organisation's rows) as what it is (asked as a value worked out in the scan, it was
  // priced as one entry and read all of it: 1.4 s among 100,000 quotes).
  // So does a term of letters outside ASCII, which pg_trgm may make no trigram of.
  for (const term of ["k 1", "ΣΟΦΙΑ"]) {
    const short = await searchPlans(h.databaseUrl, crmService.service, big, "tasks_matching", term);
    const shortScans = short.flatMap(scansOf).filter((scan) => scan.table === "tasks");
    assert(shortScans.length > 0, `"${term}" reads the tasks`);
    for (const node of short.flatMap(nodesOf).filter((n) => n["Index Name"] === "tasks_search")) {
      assert(
        !node["Index Cond"]?.includes("InitPlan"),
        `"${term}" asked blind: ${node["Index Cond"]}`,
      );
    }
  }
  const wholeBlocks = await h.sql.begin(async (tx) => {
    await tx`SET LOCAL search_path TO ${tx(crmService.service)}`;
    await tx`SET LOCAL enable_seqscan = off`;
    const [row] = await tx.unsafe<{ "QUERY PLAN": { Plan: PlanNode }[] }[]>(`
      EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
      SELECT id FROM tasks t WHERE tasks_search_text(t) ILIKE '%Scale task 1000%'`);
    return blocksThrough([row!["QUERY PLAN"][0]!.Plan], "tasks_search");
  });
  assert(narrowed > 0, "the search read its trigram index");
  assert(
    narrowed * 4 <= wholeBlocks,
    `the piece read ${narrowed} blocks of the index, the whole term ${wholeBlocks}`,
  );

  // Declared again with the same columns (as migration 0007 does), the index is kept; with
  // others, it is built anew on them.
  const indexOid = async (): Promise<number> => {
    const [row] = await h.sql<{ oid: number }[]>`
      SELECT to_regclass(${`${crmService.service}.tasks_search`})::oid::int AS oid`;
    return row!.oid;
  };
  const declare = (columns: string[]) =>
    h.sql.begin(async (tx) => {
      await tx`SELECT set_config('search_path', ${crmService.service}, true)`;
      await tx`SELECT declare_search('tasks', ${columns})`;
    });
  const before = await indexOid();
  await declare(["title", "description"]);
  assert.equal(await indexOid(), before, "the same columns keep the index");
  assert.equal((await found("Scale task 1000")).length, 11);
  await declare(["title"]);
  assert.notEqual(await indexOid(), before, "other columns build it anew");
  assert.deepStrictEqual(await found("Seeded by"), []);
  assert.equal((await found("Scale task 1000")).length, 11);

  // An index of the kind declared before platform migration 0007, over the whole row (which kept
  // every update of the table from being heap-only), is built anew over the columns even when
  // they are the same.
  await h.sql.begin(async (tx) => {
    await tx`SELECT set_config('search_path', ${crmService.service}, true)`;
    await tx`DROP INDEX tasks_search`;
    await tx.unsafe(`CREATE INDEX tasks_search ON tasks USING gin
      (tasks_search_text(tasks) printshop_extensions.gin_trgm_ops)`);
  });
  const wholeRow = await indexOid();
  await declare(["title"]);
  assert.notEqual(await indexOid(), wholeRow, "an index over the whole row is built anew");
  const [definition] = await h.sql<{ d: string }[]>`
    SELECT pg_get_indexdef(to_regclass(${`${crmService.service}.tasks_search`})) AS d`;
  assert.match(definition!.d, /gin \(COALESCE\(title, ''::text\) /);
  assert.equal((await found("Scale task 1000")).length, 11);
});
