/**
 * docs/indexes.md names every index the product keeps, with the reads it serves: this holds the
 * file to the database every schema's migrations make, both ways, so an index cannot be added
 * without saying what it earns, nor dropped and still be listed.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect } from "@printshop/shared/db";
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

Deno.test("docs/indexes.md lists every index of every schema, and none that is not there", async () => {
  const db = await createTestDatabase();
  const admin = connect(db.url, { schema: "public", max: 1 });
  try {
    await migrateEverySchema(db);
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
  } finally {
    await admin.end();
    await db.drop();
  }
});
