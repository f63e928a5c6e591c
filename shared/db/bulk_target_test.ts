import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { z } from "zod";
import { ApiError } from "../http/errors.ts";
import { uuidv7 } from "../ids.ts";
import { createTestDatabase } from "../testing/db.ts";
import { BulkTarget } from "../contracts/bulk.ts";
import { offsetListQuery } from "../contracts/lists.ts";
import { fieldTable } from "./fields.ts";
import { connect, type Queryable, type Sql } from "./mod.ts";
import { listSpec, offsetPage } from "./pages.ts";
import { applyBulk, resolveBulkTarget, runBulk } from "./bulk_target.ts";

const ListThingsQuery = offsetListQuery({
  sortFields: ["name", "status"],
  named: { status: z.enum(["open", "closed"]).optional() },
  search: true,
});

const THINGS = listSpec(ListThingsQuery, {
  from: "things",
  select: "id, name, status",
  fields: fieldTable({
    name: { type: "text" },
    status: { type: "enum", values: ["open", "closed"] },
  }),
  search: "things_matching",
  order: { field: "name", direction: "asc" },
});

interface Row {
  id: string;
  name: string;
  status: "open" | "closed";
}

const ORG = crypto.randomUUID();
const OTHER_ORG = crypto.randomUUID();
const ofOrg = (organizationId: string) => (sql: Queryable) =>
  sql`organization_id = ${organizationId}`;

async function scratch(): Promise<{ sql: Sql; [Symbol.asyncDispose](): Promise<void> }> {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "public" });
  await sql`
    CREATE TABLE things (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      name text NOT NULL,
      status text NOT NULL
    )`;
  // What a migration gives a searchable table (README "Search"), without the organisation the
  // services' functions read from the transaction: these lists name theirs in `where`.
  await sql`
    CREATE FUNCTION things_matching(pattern text) RETURNS SETOF uuid LANGUAGE sql STABLE
    BEGIN ATOMIC SELECT id FROM things WHERE name ILIKE pattern ESCAPE '\\'; END`;
  return {
    sql,
    async [Symbol.asyncDispose]() {
      await sql.end();
      await db.drop();
    },
  };
}

async function insert(sql: Sql, name: string, status: string, org = ORG): Promise<string> {
  const id = uuidv7();
  await sql`INSERT INTO things VALUES (${id}, ${org}, ${name}, ${status})`;
  return id;
}

const target = (value: unknown): BulkTarget => BulkTarget.parse(value);

Deno.test("BulkTarget: exactly one branch; both or neither is refused by name", () => {
  const id = crypto.randomUUID();
  assert(BulkTarget.safeParse({ ids: [id] }).success);
  assert(BulkTarget.safeParse({ filters: [] }).success);
  assert(BulkTarget.safeParse({ excludeIds: [id] }).success);
  const both = BulkTarget.safeParse({ ids: [id], search: "x" });
  assertEquals(both.error?.issues.map((i) => i.path), [["search"]]);
  assert(both.error?.issues[0]?.message.includes("not both"));
  const neither = BulkTarget.safeParse({});
  assertEquals(neither.error?.issues.map((i) => i.path), [[]]);
  assert(!BulkTarget.safeParse({ ids: [] }).success, "an empty id list targets nothing");
  assert(!BulkTarget.safeParse({ ids: ["x"] }).success);
  assert(!BulkTarget.safeParse({ filters: [], other: 1 }).success, "nothing undeclared");
});

Deno.test("resolveBulkTarget(): the filter branch selects what the list shows, minus excludeIds", async () => {
  await using db = await scratch();
  const { sql } = db;
  for (let i = 0; i < 12; i++) await insert(sql, `thing ${i}`, i % 3 === 0 ? "closed" : "open");
  await insert(sql, "thing 1 elsewhere", "open", OTHER_ORG);
  const filters = [{ field: "status", op: "eq" as const, value: "open" }];
  const listed = await offsetPage(
    sql,
    THINGS,
    {
      where: sql`organization_id = ${ORG}`,
      query: { filters: JSON.stringify(filters), search: "THING 1" },
      pageSizeMax: 100,
    },
    (rows: Row[]) => rows.map((r) => r.id),
  );
  const resolved = await sql.begin((tx) =>
    resolveBulkTarget<Row>(tx, THINGS, {
      where: ofOrg(ORG),
      target: target({ filters, search: "THING 1" }),
      bulkMaxRows: 100,
    })
  );
  assertEquals(resolved.order, [...listed.items].sort(), "the same rows, in id order");
  assertEquals(resolved.missing, []);

  const [first, ...rest] = resolved.order;
  const excluded = await sql.begin((tx) =>
    resolveBulkTarget<Row>(tx, THINGS, {
      where: ofOrg(ORG),
      target: target({ filters, search: "THING 1", excludeIds: [first!.toUpperCase()] }),
      bulkMaxRows: 100,
    })
  );
  assertEquals(excluded.order, rest);

  await assert.rejects(
    sql.begin((tx) =>
      resolveBulkTarget<Row>(tx, THINGS, {
        where: ofOrg(ORG),
        target: target({ filters: [{ field: "secret", op: "eq", value: 1 }] }),
        bulkMaxRows: 100,
      })
    ),
    (e) => e instanceof ApiError && e.details?.[0]?.path === "target.filters.0.field",
  );
  await assert.rejects(
    sql.begin((tx) =>
      resolveBulkTarget<Row>(tx, THINGS, {
        where: ofOrg(ORG),
        target: target({ filters: [] }),
        bulkMaxRows: 11,
      })
    ),
    (e) => e instanceof ApiError && e.code === "validation_error" && e.message.includes("11"),
  );
});

Deno.test("resolveBulkTarget(): the ids branch finds the organisation's rows, the rest not_found", async () => {
  await using db = await scratch();
  const { sql } = db;
  const mine = await insert(sql, "a", "open");
  const theirs = await insert(sql, "b", "open", OTHER_ORG);
  const unknown = crypto.randomUUID();
  const resolved = await sql.begin((tx) =>
    resolveBulkTarget<Row>(tx, THINGS, {
      where: ofOrg(ORG),
      target: target({ ids: [theirs, mine, unknown, mine] }),
      bulkMaxRows: 3,
    })
  );
  assertEquals(resolved.rows.map((r) => r.id), [mine]);
  assertEquals(resolved.missing, [theirs, unknown]);
  assertEquals(resolved.order, [theirs, mine, unknown], "as given, repeats once");
  await assert.rejects(
    sql.begin((tx) =>
      resolveBulkTarget<Row>(tx, THINGS, {
        where: ofOrg(ORG),
        target: target({ ids: [theirs, mine, unknown] }),
        bulkMaxRows: 2,
      })
    ),
    (e) => e instanceof ApiError && e.details?.[0]?.path === "target.ids",
  );
});

Deno.test("resolveBulkTarget(): rows stay locked until the caller's transaction ends", async () => {
  await using db = await scratch();
  const { sql } = db;
  const id = await insert(sql, "a", "open");
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => locked = resolve);
  const first = sql.begin(async (tx) => {
    await resolveBulkTarget<Row>(tx, THINGS, {
      where: ofOrg(ORG),
      target: target({ ids: [id] }),
      bulkMaxRows: 10,
    });
    locked();
    await held;
    await tx`UPDATE things SET name = 'first' WHERE id = ${id}`;
  });
  await isLocked;
  try {
    const free = await sql`SELECT id FROM things WHERE id = ${id} FOR UPDATE SKIP LOCKED`;
    assertEquals(free.length, 0, "another transaction cannot take the row meanwhile");
  } finally {
    release();
  }
  await first;
  assertEquals((await sql<Row[]>`SELECT name FROM things WHERE id = ${id}`)[0]?.name, "first");
});

Deno.test("applyBulk(): decides each row, applies the accepted ones once, counts outcomes", async () => {
  const rows: Row[] = [
    { id: "a", name: "a", status: "open" },
    { id: "b", name: "b", status: "closed" },
    { id: "c", name: "c", status: "open" },
  ];
  const applied: string[][] = [];
  const result = await applyBulk(
    { rows, missing: ["d"], order: ["d", "c", "b", "a"] },
    (row) =>
      row.id === "a"
        ? { status: "refused", reason: "Not a" }
        : row.status === "closed"
        ? { status: "unchanged" }
        : { status: "ok", change: "closed" },
    (changes) => {
      applied.push(changes.map((c) => `${c.row.id}:${c.change}`));
      return Promise.resolve();
    },
  );
  assertEquals(applied, [["c:closed"]]);
  assertEquals(result, {
    requested: 4,
    affected: 1,
    refused: 1,
    failed: 1,
    outcomes: [
      { id: "d", status: "failed", reason: "not_found" },
      { id: "c", status: "ok" },
      { id: "b", status: "unchanged" },
      { id: "a", status: "refused", reason: "Not a" },
    ],
  });
  const none = await applyBulk(
    { rows: [], missing: [], order: [] },
    () => ({ status: "unchanged" }),
    () => Promise.reject(new Error("nothing to apply")),
  );
  assertEquals(none, { requested: 0, affected: 0, refused: 0, failed: 0, outcomes: [] });
});

Deno.test("runBulk(): one transaction; a failing apply changes nothing", async () => {
  await using db = await scratch();
  const { sql } = db;
  const a = await insert(sql, "a", "open");
  const b = await insert(sql, "b", "open");
  await assert.rejects(
    runBulk<Row, null>(
      sql,
      THINGS,
      { where: ofOrg(ORG), target: target({ filters: [] }), bulkMaxRows: 10 },
      () => ({ status: "ok", change: null }),
      async (tx, changes) => {
        await tx`UPDATE things SET status = 'closed' WHERE id = ${changes[0]!.row.id}`;
        throw new Error("boom");
      },
    ),
    /boom/,
  );
  const statuses = await sql<Row[]>`SELECT status FROM things WHERE id IN (${a}, ${b})`;
  assertEquals(statuses.map((r) => r.status), ["open", "open"]);
});
