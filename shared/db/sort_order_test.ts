import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { uuidv7 } from "../ids.ts";
import { createTestDatabase } from "../testing/db.ts";
import { connect } from "./mod.ts";
import { SortSequence } from "./sort_order.ts";

Deno.test("SortSequence keeps one gapless 1..n order across its member tables", async (t) => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "public" });
  try {
    for (const table of ["notes", "photos"]) {
      await sql.unsafe(`CREATE TABLE ${table} (
        id uuid PRIMARY KEY, parent_id uuid NOT NULL, sort_order int NOT NULL)`);
    }
    const rows = new SortSequence("parent_id", [
      { kind: "note", table: "notes" },
      { kind: "photo", table: "photos" },
    ]);
    const parent = crypto.randomUUID();
    const other = crypto.randomUUID();
    const add = async (kind: "note" | "photo", sortOrder: number, parentId = parent) => {
      const id = uuidv7();
      await sql.unsafe(
        `INSERT INTO ${kind === "note" ? "notes" : "photos"} VALUES ($1, $2, $3)`,
        [id, parentId, sortOrder],
      );
      return { id, kind };
    };
    const numbers = async () =>
      await sql<{ id: string; sort_order: number }[]>`
        SELECT id, sort_order FROM notes WHERE parent_id = ${parent}
        UNION ALL SELECT id, sort_order FROM photos WHERE parent_id = ${parent}
        ORDER BY sort_order`;

    // Written out of order and with a tie: read in number order, a tie by member then id.
    const n1 = await add("note", 5);
    const p1 = await add("photo", 5);
    const n2 = await add("note", 9);
    const p2 = await add("photo", 1);
    await add("note", 1, other);

    await t.step("read() orders by number, then member, then id", async () => {
      assertEquals(await rows.read(sql, parent), [p2, n1, p1, n2]);
    });

    await t.step("compact() writes 1..n in that order", async () => {
      await rows.compact(sql, parent);
      assertEquals((await numbers()).map((r) => [r.id, r.sort_order]), [
        [p2.id, 1],
        [n1.id, 2],
        [p1.id, 3],
        [n2.id, 4],
      ]);
    });

    await t.step("place() inserts or moves a row and renumbers the rest", async () => {
      const p3 = await add("photo", 100_000);
      await rows.place(sql, parent, p3, 2);
      assertEquals(await rows.read(sql, parent), [p2, p3, n1, p1, n2]);
      await rows.place(sql, parent, n2, 1);
      assertEquals(await rows.read(sql, parent), [n2, p2, p3, n1, p1]);
      await rows.place(sql, parent, p2, undefined);
      assertEquals(await rows.read(sql, parent), [n2, p3, n1, p1, p2]);
      assertEquals((await numbers()).map((r) => r.sort_order), [1, 2, 3, 4, 5]);
    });

    await t.step(
      "numberForInsert() appends in the INSERT itself, or starts a row placed after",
      async () => {
        const insert = async (position: number | undefined) => {
          const id = uuidv7();
          await sql`INSERT INTO notes VALUES (${id}, ${parent}, ${
            rows.numberForInsert(sql, parent, position)
          })`;
          const row = { id, kind: "note" as const };
          await rows.placeIfGiven(sql, parent, row, position);
          return row;
        };
        const before = await rows.read(sql, parent);
        const last = await insert(undefined);
        const second = await insert(2);
        assertEquals(await rows.read(sql, parent), [
          before[0]!,
          second,
          ...before.slice(1),
          last,
        ]);
        assertEquals((await numbers()).map((r) => r.sort_order), [1, 2, 3, 4, 5, 6, 7]);
        // An empty parent's first row is number 1.
        const empty = crypto.randomUUID();
        await sql`INSERT INTO photos VALUES (${uuidv7()}, ${empty}, ${
          rows.numberForInsert(sql, empty, undefined)
        })`;
        const [first] = await sql<{ sort_order: number }[]>`
        SELECT sort_order FROM photos WHERE parent_id = ${empty}`;
        assertEquals(first?.sort_order, 1);
      },
    );

    await t.step("compact() closes gaps in both tables in one statement", async () => {
      const ordered = await rows.read(sql, parent);
      await sql`DELETE FROM notes WHERE id = ${ordered[1]!.id}`;
      await sql`DELETE FROM photos WHERE id = ${ordered.find((r) => r.kind === "photo")!.id}`;
      let statements = 0;
      const counted = connect(db.url, { schema: "public", onQuery: () => statements++ });
      try {
        // A new connection first asks for the server's types; that is not the compaction.
        await counted`SELECT 1`;
        statements = 0;
        await rows.compact(counted, parent);
      } finally {
        await counted.end();
      }
      assertEquals(statements, 1);
      const left = ordered.filter((r, i) =>
        i !== 1 && r !== ordered.find((o) => o.kind === "photo")
      );
      assertEquals(await rows.read(sql, parent), left);
      assertEquals((await numbers()).map((r) => r.sort_order), [1, 2, 3, 4, 5]);
    });

    await t.step("another parent's rows are never touched", async () => {
      const [row] = await sql<{ sort_order: number }[]>`
        SELECT sort_order FROM notes WHERE parent_id = ${other}`;
      assertEquals(row?.sort_order, 1);
    });
  } finally {
    await sql.end();
    await db.drop();
  }
});
