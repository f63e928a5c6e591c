/**
 * Migration 0006 on a catalogue written before it: external ids that repeat within an
 * organisation keep the oldest row's value and suffix the later ones, other organisations'
 * rows and distinct values are left alone, and the rule then holds.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect, migrate, PLATFORM_MIGRATIONS, readMigrations } from "@printshop/shared/db";
import { createTestDatabase } from "@printshop/shared/testing";

Deno.test("migration 0006 keeps the oldest row's external id and suffixes later duplicates", async () => {
  const db = await createTestDatabase();
  const owner = connect(db.ownerUrl, { schema: "catalogue", max: 1 });
  try {
    const all = await readMigrations(new URL("./migrations/", import.meta.url));
    // As a service's start does: the platform's track first (later migrations rely on it).
    const platform = await readMigrations(PLATFORM_MIGRATIONS);
    await migrate(owner, "catalogue", platform, undefined, "platform_migrations");
    await migrate(owner, "catalogue", all.filter((m) => m.version < 6));
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    const long = "L".repeat(200);
    const items = [
      { org: a, code: "A1", ext: "GIL-5000", at: "2026-01-01" },
      { org: a, code: "A2", ext: "GIL-5000", at: "2026-01-03" },
      { org: a, code: "A3", ext: "GIL-5000", at: "2026-01-02" },
      { org: a, code: "A4", ext: long, at: "2026-01-01" },
      { org: a, code: "A5", ext: long, at: "2026-01-02" },
      { org: a, code: "A6", ext: "unique", at: "2026-01-01" },
      { org: a, code: "A7", ext: null, at: "2026-01-01" },
      { org: a, code: "A8", ext: null, at: "2026-01-02" },
      { org: b, code: "B1", ext: "GIL-5000", at: "2026-01-05" },
    ];
    for (const item of items) {
      await owner`
        INSERT INTO catalogue_items (id, organization_id, style_code, name, external_id, created_at)
        VALUES (${crypto.randomUUID()}, ${item.org}, ${item.code}, ${item.code}, ${item.ext},
          ${item.at})`;
    }
    const itemId = (await owner`SELECT id FROM catalogue_items WHERE style_code = 'A1'`)[0]!.id;
    for (const [size, at] of [["S", "2026-01-02"], ["M", "2026-01-01"]] as const) {
      await owner`
        INSERT INTO garment_variants (id, organization_id, garment_catalogue_item_id, style_code,
          color, size, size_key, external_id, created_at)
        VALUES (${crypto.randomUUID()}, ${a}, ${itemId}, 'A1', 'Black', ${size}, ${size},
          'GIL-5000-BLK', ${at})`;
    }

    await migrate(owner, "catalogue", all);

    const rows = await owner<{ style_code: string; external_id: string | null }[]>`
      SELECT style_code, external_id FROM catalogue_items ORDER BY style_code`;
    assertEquals(Object.fromEntries(rows.map((r) => [r.style_code, r.external_id])), {
      A1: "GIL-5000",
      A2: "GIL-5000 (duplicate 3)",
      A3: "GIL-5000 (duplicate 2)",
      A4: long,
      A5: `${"L".repeat(180)} (duplicate 2)`,
      A6: "unique",
      A7: null,
      A8: null,
      B1: "GIL-5000",
    });
    const variants = await owner<{ size: string; external_id: string }[]>`
      SELECT size, external_id FROM garment_variants ORDER BY size`;
    assertEquals(variants.map((v) => [v.size, v.external_id]), [
      ["M", "GIL-5000-BLK"],
      ["S", "GIL-5000-BLK (duplicate 2)"],
    ]);
    // The rule holds from now on.
    await assert.rejects(
      owner`UPDATE catalogue_items SET external_id = 'unique' WHERE style_code = 'A7'`,
      /catalogue_items_external_id_key/,
    );
  } finally {
    await owner.end();
    await db.drop();
  }
});
