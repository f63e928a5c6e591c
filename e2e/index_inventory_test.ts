/**
 * docs/indexes.md names every index the product keeps, with the reads it serves: this holds the
 * file to the database every schema's migrations make, both ways, so an index cannot be added
 * without saying what it earns, nor dropped and still be listed.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect, type Sql } from "@printshop/shared/db";
import { createTestDatabase } from "@printshop/shared/testing";
import { migrateEverySchema, SCHEMAS } from "./tenancy.ts";

const INVENTORY = new URL("../docs/indexes.md", import.meta.url);
/** The section whose rows every schema with the platform track has. */
const EVERY_SCHEMA = "Every service schema";

/** Each schema's index names as the file lists them (`## name (schema `x`)` sections). */
async function listed(): Promise<Map<string, Set<string>>> {
  const bySection = new Map<string, Set<string>>();
  let section: string | null = null;
  for (const line of (await Deno.readTextFile(INVENTORY)).split("\n")) {
    const heading = line.match(/^## (.*)$/);
    if (heading) {
      const schema = heading[1]!.match(/\(schema `(\w+)`/);
      section = heading[1]!.startsWith(EVERY_SCHEMA) ? EVERY_SCHEMA : schema?.[1] ?? null;
      continue;
    }
    // A table's row: | table | index | keys | serves |
    const row = line.match(/^\| *(\w+) *\| *(\w+) *\|/);
    if (section === null || !row || row[1] === "table") continue;
    bySection.set(section, (bySection.get(section) ?? new Set()).add(row[2]!));
  }
  const bySchema = new Map<string, Set<string>>();
  for (const { schema, platform } of SCHEMAS) {
    const own = bySection.get(schema) ?? new Set<string>();
    bySchema.set(
      schema,
      new Set([...own, ...(platform ? bySection.get(EVERY_SCHEMA) ?? [] : [])]),
    );
  }
  return bySchema;
}

Deno.test("the indexes and planner statistics of every schema", async (t) => {
  const db = await createTestDatabase();
  const admin = connect(db.url, { schema: "public", max: 1 });
  try {
    await migrateEverySchema(db);
    await t.step("docs/indexes.md lists every one, and none that is not there", async () => {
      await inventoryMatches(admin);
    });
    await t.step("none reads the whole row, so updates can be heap-only", async () => {
      await noWholeRowIndex(admin);
    });
    await t.step("an event's payload carries no planner statistics", async () => {
      await payloadsUnanalysed(admin);
    });
  } finally {
    await admin.end();
    await db.drop();
  }
});

async function inventoryMatches(admin: Sql): Promise<void> {
  {
    const rows = await admin<{ schema: string; name: string }[]>`
      SELECT schemaname AS schema, indexname AS name FROM pg_indexes
      WHERE schemaname = ANY(${SCHEMAS.map((s) => s.schema)})`;
    const inventory = await listed();
    for (const { schema } of SCHEMAS) {
      const held = rows.filter((r) => r.schema === schema).map((r) => r.name).sort();
      const named = [...inventory.get(schema) ?? []].sort();
      assertEquals(
        { missingFromTheFile: held.filter((n) => !named.includes(n)) },
        { missingFromTheFile: [] },
        `${schema}: an index the database holds has no row in docs/indexes.md (say what it serves)`,
      );
      assertEquals(
        { notInTheDatabase: named.filter((n) => !held.includes(n)) },
        { notInTheDatabase: [] },
        `${schema}: docs/indexes.md lists an index the database does not hold`,
      );
    }
  }
}

/**
 * PostgreSQL cannot tell which columns an index expression over the whole row (`f(t)` of a row
 * type) reads, so it counts every UPDATE of that table as changing an indexed column: none is
 * heap-only, and each writes into every index of the table. The search indexes were once such
 * (platform migration 0007 has why). A whole-row reference is a Var of attribute 0 in the stored
 * expression or predicate.
 */
async function noWholeRowIndex(admin: Sql): Promise<void> {
  const wholeRow = await admin<{ index: string; definition: string }[]>`
    SELECT i.indexrelid::regclass::text AS index, pg_get_indexdef(i.indexrelid) AS definition
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
    WHERE c.relnamespace::regnamespace::text = ANY(${SCHEMAS.map((s) => s.schema)})
      AND (i.indexprs::text ~ ':varattno 0 ' OR i.indpred::text ~ ':varattno 0 ')
    ORDER BY 1`;
  assertEquals(
    [...wholeRow],
    [],
    "an index reads the whole row: write it over the columns it needs",
  );
  // And so an update that changes no indexed column is heap-only: a quote's, as every change to
  // its rows makes (its totals and updatedAt).
  const [hot] = await admin.begin(async (tx) => {
    await tx`SET LOCAL search_path TO quotes`;
    const org = crypto.randomUUID();
    await tx`SELECT set_config('printshop.organization_id', ${org}, true)`;
    const [rate] = await tx<{ id: string }[]>`
      INSERT INTO tax_rates (id, organization_id, name, rate_pct, is_default)
      VALUES (${crypto.randomUUID()}, ${org}, 'GST', 10, true) RETURNING id`;
    const id = crypto.randomUUID();
    await tx`
      INSERT INTO quotes (id, organization_id, quote_number, quote_ref, reference, tax_rate_id,
        tax_name, tax_rate_pct)
      VALUES (${id}, ${org}, 1, 'Q-00001', 'Heap-only', ${rate!.id}, 'GST', 10)`;
    await tx`UPDATE quotes SET updated_at = now() + interval '1 second' WHERE id = ${id}`;
    return await tx<{ updated: number; heapOnly: number }[]>`
      SELECT pg_stat_get_xact_tuples_updated('quotes'::regclass)::int AS updated,
        pg_stat_get_xact_tuples_hot_updated('quotes'::regclass)::int AS "heapOnly"`;
  });
  assertEquals(hot, { updated: 1, heapOnly: 1 }, "a quote's updatedAt written heap-only");
}

/**
 * An event's payload (every outbox's `payload`, the webhooks' and the bus's `data`) is carried,
 * never filtered or sorted on, so ANALYZE skips it (platform migration 0008 has why): a payload
 * column of any schema with a statistics target other than 0 is listed.
 */
async function payloadsUnanalysed(admin: Sql): Promise<void> {
  const columns = await admin<{ column: string; target: number | null }[]>`
    SELECT c.relnamespace::regnamespace::text || '.' || c.relname || '.' || a.attname AS column,
      a.attstattarget::int AS target
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    WHERE c.relkind = 'r' AND NOT a.attisdropped AND a.atttypid = 'jsonb'::regtype
      AND a.attname IN ('payload', 'data')
      AND c.relnamespace::regnamespace::text = ANY(${SCHEMAS.map((s) => s.schema)})
    ORDER BY 1`;
  // Every schema with the platform track has an outbox; the webhooks and the bus keep events.
  const expected = SCHEMAS.filter((s) => s.platform).map((s) => `${s.schema}.outbox.payload`)
    .concat(["eventbus.messages.data", "webhooks.events.data"]).sort();
  assertEquals(columns.map((c) => c.column).sort(), expected, "the payload columns");
  assertEquals(
    columns.filter((c) => c.target !== 0).map((c) => c.column),
    [],
    "a payload column that ANALYZE still samples: SET STATISTICS 0",
  );
}
