import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import fc from "fast-check";
import { ApiError } from "../http/errors.ts";
import { importContextKey } from "../internal_context.ts";
import { uuidv7 } from "../ids.ts";
import { createTestDatabase } from "../testing/db.ts";
import { fieldTable } from "./fields.ts";
import { connect, type Sql } from "./mod.ts";
import { z } from "zod";
import { cursorListQuery, offsetListQuery } from "../contracts/lists.ts";
import { cursorPage, type CursorQuery, listSpec, offsetPage } from "./pages.ts";

const FIELDS = fieldTable({
  name: { type: "text" },
  // Filtered as text, sorted by the number behind it: code 10 follows code 9.
  code: { type: "text", sortColumn: "code_number", sortType: "number" },
  price: { type: "number", nullable: true },
  status: { type: "enum", values: ["open", "closed"] },
  createdAt: { type: "datetime" },
});

interface Row {
  id: string;
  name: string;
  price: string | null;
  status: string;
  created_at: Date;
}

async function scratch(
  pool: { max?: number } = {},
): Promise<{ sql: Sql; [Symbol.asyncDispose](): Promise<void> }> {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "public", ...pool });
  await sql`
    CREATE TABLE things (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      name text NOT NULL,
      price numeric,
      code text NOT NULL,
      code_number integer NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL
    )`;
  // What a migration gives a searchable table (README "Search"), without the organisation the
  // services' functions read from the transaction: these lists name theirs in `where`.
  await sql`
    CREATE FUNCTION things_matching(pattern text) RETURNS SETOF uuid LANGUAGE sql STABLE
    BEGIN ATOMIC SELECT id FROM things WHERE name ILIKE pattern ESCAPE '\\'; END`;
  // The walk's two (platform migration 0005): how common a term is, here read off every
  // organisation's rows, as the services' read it off a sample of them; and which of some ids
  // match.
  await sql`
    CREATE FUNCTION things_matching_is_common(pattern text, at_least float8) RETURNS boolean
    LANGUAGE sql STABLE BEGIN ATOMIC
      SELECT coalesce(avg((name ILIKE pattern ESCAPE '\\')::int), 0) >= at_least FROM things;
    END`;
  await sql`
    CREATE FUNCTION things_matching_among(pattern text, among uuid[]) RETURNS SETOF uuid
    LANGUAGE sql STABLE BEGIN ATOMIC
      SELECT id FROM things WHERE id = ANY (among) AND name ILIKE pattern ESCAPE '\\';
    END`;
  return {
    sql,
    async [Symbol.asyncDispose]() {
      await sql.end();
      await db.drop();
    },
  };
}

const ORG = crypto.randomUUID();
const OTHER_ORG = crypto.randomUUID();

const ListThingsQuery = cursorListQuery({
  sortFields: ["createdAt", "name", "price", "status", "code"],
  named: { status: z.enum(["open", "closed"]).optional() },
  search: true,
});

const THINGS = listSpec(ListThingsQuery, {
  from: "things",
  select: "id, name, price, status, created_at",
  fields: FIELDS,
  search: "things_matching",
  order: { field: "createdAt", direction: "desc" },
});

const ofOrg = (sql: Sql, organizationId = ORG) => sql`organization_id = ${organizationId}`;

/** Rows with ties on every column but the id, NULL prices, and microseconds a JS Date loses. */
async function seed(sql: Sql, count: number, organizationId = ORG): Promise<void> {
  const base = Date.UTC(2026, 10, 1);
  for (let i = 0; i < count; i++) {
    await sql`
      INSERT INTO things (id, organization_id, name, price, code, code_number, status, created_at)
      VALUES (${uuidv7()}, ${organizationId}, ${`thing ${i % 7}`},
              ${i % 4 === 0 ? null : String((i % 5) * 1.25)}, ${`C-${i % 13}`}, ${i % 13},
              ${i % 3 === 0 ? "closed" : "open"},
              ${new Date(base + (i % 9) * 1000).toISOString()}::timestamptz
                + make_interval(secs => ${(i % 4) / 1_000_000}))`;
  }
}

const names = (rows: readonly Row[]): string[] => rows.map((r) => r.id);

Deno.test("offsetPage() filters, sorts with the id last, pages and counts every match", async () => {
  await using db = await scratch();
  const { sql } = db;
  await seed(sql, 40);
  await seed(sql, 5, OTHER_ORG);
  const page = (query: Record<string, unknown>, pageSizeMax = 200) =>
    offsetPage(sql, THINGS, { where: ofOrg(sql), query, pageSizeMax }, (rows: Row[]) => rows);

  const all = await page({});
  assertEquals(all.totalCount, 40, "only this organisation's rows");
  const expected = await sql<Row[]>`
    SELECT id FROM things WHERE organization_id = ${ORG} ORDER BY created_at DESC, id DESC`;
  assertEquals(names(all.items), names(expected), "newest first by default, the id breaks ties");

  const cheapest = await page({ sortField: "price" });
  const prices = cheapest.items.map((r) => r.price);
  assertEquals(prices.slice(-10), Array(10).fill(null), "NULLs last ascending");
  const dear = await page({ sortField: "price", sortDirection: "desc" });
  assertEquals(dear.items.map((r) => r.price).slice(-10), Array(10).fill(null), "and descending");

  const closed = await page({ status: "closed", search: "THING 1", limit: 3 });
  const matching = await sql<Row[]>`
    SELECT id FROM things WHERE organization_id = ${ORG} AND status = 'closed'
      AND name ILIKE '%thing 1%'`;
  assertEquals(closed.totalCount, matching.length);
  assert(closed.items.length <= 3);

  const filtered = await page({ filters: JSON.stringify([{ field: "price", op: "isNull" }]) });
  assertEquals(filtered.totalCount, 10);
  await assert.rejects(
    page({ filters: JSON.stringify([{ field: "secret", op: "eq", value: 1 }]) }),
    (e) => e instanceof ApiError && e.details?.[0]?.path === "filters.0.field",
  );

  assertEquals((await page({ limit: 500 }, 7)).items.length, 7, "capped at the page size limit");
  const none = await page({ limit: 0 });
  assertEquals([none.items.length, none.totalCount], [0, 40]);
  const second = await page({ limit: 10, offset: 10 });
  assertEquals(names(second.items), names(all.items).slice(10, 20));
});

/** Every row of the list, page by page, following nextCursor. */
async function walk(
  sql: Sql,
  query: CursorQuery & Record<string, unknown>,
  between: () => Promise<void> = () => Promise.resolve(),
): Promise<{ ids: string[]; pages: number }> {
  const key = await importContextKey("cursor-test-secret-of-at-least-32-chars");
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await cursorPage(sql, THINGS, {
      where: ofOrg(sql),
      query: { ...query, ...(cursor ? { cursor } : {}) },
      pageSizeMax: 200,
      scope: { key, list: "listThings", organizationId: ORG },
    }, (rows: Row[]) => rows);
    ids.push(...names(page.items));
    cursor = page.nextCursor ?? undefined;
    pages++;
    await between();
    if (pages > 10_000) throw new Error("The walk did not end: a cursor that never advances");
  } while (cursor !== undefined);
  return { ids, pages };
}

const ORDERS: { sortField?: string; sortDirection?: "asc" | "desc" }[] = [
  {},
  { sortField: "createdAt", sortDirection: "asc" },
  { sortField: "name" },
  { sortField: "name", sortDirection: "desc" },
  { sortField: "price" },
  { sortField: "price", sortDirection: "desc" },
  { sortField: "status", sortDirection: "desc" },
  { sortField: "code" },
  { sortField: "code", sortDirection: "desc" },
];

Deno.test("a search list is planned for its term and organisation each time, other lists keep their plans", async () => {
  // One connection, so every page is prepared and planned on the session read below.
  await using db = await scratch({ max: 1 });
  const { sql } = db;
  {
    await seed(sql, 40);
    const key = await importContextKey("cursor-test-secret-of-at-least-32-chars");
    const offset = (query: Record<string, unknown>) =>
      offsetPage(sql, THINGS, { where: ofOrg(sql), query, pageSizeMax: 200 }, (r: Row[]) => r);
    const cursor = (query: Record<string, unknown>) =>
      cursorPage(
        sql,
        THINGS,
        {
          where: ofOrg(sql),
          query,
          pageSizeMax: 200,
          scope: { key, organizationId: ORG, list: "t" },
        },
        (r: Row[]) => r,
      );
    // PostgreSQL may keep a plan for any values after a statement's fifth run: more than that.
    for (let i = 0; i < 8; i++) {
      await offset({ search: "thing 1" });
      await cursor({ search: "thing 1" });
      await offset({});
      await cursor({});
    }
    const plans = (searched: boolean) =>
      sql<{ generic: number; custom: number }[]>`
        SELECT coalesce(sum(generic_plans), 0)::int AS generic,
          coalesce(sum(custom_plans), 0)::int AS custom
        FROM pg_prepared_statements
        WHERE statement LIKE '%FROM things%' AND cardinality(parameter_types) > 0
          AND (statement LIKE '%things_matching%') = ${searched}`;
    const [search] = await plans(true);
    assertEquals(search!.generic, 0, "a search's statements were planned for any values");
    assert(search!.custom >= 24, `the search's statements ran ${search!.custom} times`);
    const [plain] = await plans(false);
    assert(plain!.generic > 0, "the other lists' statements keep a plan, as before");
  }
});

Deno.test("a list that need not count walks its rows for a common term, and answers what the search answers", async () => {
  // One connection, so what ran shows in its prepared statements.
  await using db = await scratch({ max: 1 });
  const { sql } = db;
  // More rows than a walk for a short page reads (40 a row it needs), so which rows it reads
  // tells.
  await seed(sql, 200);
  await seed(sql, 5, OTHER_ORG);
  // "zebra": common in the table (another shop's), two rows of this shop's, and those its oldest:
  // a walk of the newest rows finds too few, and the list is searched as always.
  const base = Date.UTC(2020, 0, 1);
  for (const [organizationId, count] of [[ORG, 2], [OTHER_ORG, 40]] as const) {
    for (let i = 0; i < count; i++) {
      await sql`
        INSERT INTO things (id, organization_id, name, price, code, code_number, status, created_at)
        VALUES (${uuidv7()}, ${organizationId}, ${`zebra ${i}`}, NULL, ${`Z-${i}`}, ${i},
                'open', ${new Date(base + i).toISOString()})`;
    }
  }
  await sql`
    INSERT INTO things (id, organization_id, name, price, code, code_number, status, created_at)
    VALUES (${uuidv7()}, ${ORG}, 'rare gadget', 1, 'R-1', 1, 'open', now())`;
  const ran = async (fn: string) => {
    const [row] = await sql<{ n: number }[]>`
      SELECT coalesce(sum(custom_plans + generic_plans), 0)::int AS n FROM pg_prepared_statements
      WHERE statement LIKE ${`%${fn}(%`}`;
    return row!.n;
  };
  const walks = () => ran("things_matching_among");
  const page = (query: Record<string, unknown>) =>
    offsetPage(sql, THINGS, { where: ofOrg(sql), query, pageSizeMax: 200 }, (rows: Row[]) => rows);
  // A walk that finds the page is the answer: the search function is not asked.
  const searched = await ran("things_matching");
  const first = await page({ search: "thing 1", limit: 2, count: false });
  assertEquals(first.items.length, 2);
  const key = await importContextKey("cursor-test-secret-of-at-least-32-chars");
  const scope = { key, list: "listThings", organizationId: ORG };
  const query = { search: "thing 1", limit: 2 };
  const firstOfCursor = await cursorPage(
    sql,
    THINGS,
    { where: ofOrg(sql), query, pageSizeMax: 200, scope },
    (rows: Row[]) => rows,
  );
  assertEquals(firstOfCursor.items.length, 2);
  assertEquals(await ran("things_matching"), searched, "a walk found the page, nothing searched");
  for (const search of ["thing 1", "THING", "zebra", "rare gadget", "nothing"]) {
    const before = await walks();
    for (const order of ORDERS) {
      for (const limit of [1, 3, 10]) {
        for (const offset of [0, 2, 5]) {
          const what = `${search} ${JSON.stringify(order)} ${offset}+${limit}`;
          const counted = await page({ ...order, search, limit, offset });
          const uncounted = await page({ ...order, search, limit, offset, count: false });
          assertEquals(names(uncounted.items), names(counted.items), what);
          assertEquals(uncounted.hasMore, counted.hasMore, `${what}: hasMore`);
        }
        const all = await page({ ...order, search });
        const walked = await walk(sql, { ...order, search, limit });
        assertEquals(
          walked.ids,
          names(all.items),
          `${search} ${JSON.stringify(order)} by ${limit}`,
        );
      }
    }
    const made = (await walks()) - before;
    if (["thing 1", "THING", "zebra"].includes(search)) {
      assert(made > 0, `"${search}" is common: the lists walked`);
    } else {
      assertEquals(made, 0, `"${search}" is not common: no walk`);
    }
  }
});

Deno.test("offsetPage() with count false skips the count and still says whether rows follow", async () => {
  await using db = await scratch();
  const { sql } = db;
  await seed(sql, 7);
  await seed(sql, 5, OTHER_ORG);
  const page = (query: Record<string, unknown>) =>
    offsetPage(sql, THINGS, { where: ofOrg(sql), query, pageSizeMax: 200 }, (rows: Row[]) => rows);
  for (const offset of [0, 3, 4, 6, 7, 9]) {
    for (const limit of [0, 3]) {
      const counted = await page({ limit, offset });
      assertEquals(counted.totalCount, 7);
      assertEquals(counted.hasMore, offset + limit < 7, `counted, ${offset}+${limit}`);
      const uncounted = await page({ limit, offset, count: false });
      assertEquals(uncounted.totalCount, null);
      assertEquals(uncounted.hasMore, offset + limit < 7, `uncounted, ${offset}+${limit}`);
      assertEquals(names(uncounted.items), names(counted.items));
    }
  }
  const filtered = await page({ status: "closed", limit: 2, count: false });
  const closed = await sql`
    SELECT count(*)::int AS n FROM things WHERE organization_id = ${ORG} AND status = 'closed'`;
  assertEquals(filtered.hasMore, closed[0]!.n > 2, "the filters hold for what follows too");
});

Deno.test("cursorPage() hands out every row once, in the order of the offset list", async () => {
  await using db = await scratch();
  const { sql } = db;
  await seed(sql, 37);
  for (const order of ORDERS) {
    for (const limit of [1, 5, 36, 37, 100]) {
      const expected = await offsetPage(
        sql,
        THINGS,
        { where: ofOrg(sql), query: order, pageSizeMax: 200 },
        (rows: Row[]) => rows,
      );
      const walked = await walk(sql, { ...order, limit });
      assertEquals(walked.ids, names(expected.items), `${JSON.stringify(order)} by ${limit}`);
      assertEquals(walked.pages, Math.max(1, Math.ceil(37 / limit)), "the last page ends it");
    }
  }
});

Deno.test("cursorPage() never repeats a row, nor skips one that was there throughout, while rows come and go", async () => {
  await using db = await scratch();
  const { sql } = db;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...ORDERS),
      fc.integer({ min: 1, max: 6 }),
      fc.array(fc.tuple(fc.boolean(), fc.nat()), { minLength: 1, maxLength: 12 }),
      async (order, limit, changes) => {
        await sql`DELETE FROM things`;
        await seed(sql, 20);
        const before = new Set((await sql<Row[]>`SELECT id FROM things`).map((r) => r.id));
        const deleted = new Set<string>();
        let step = 0;
        const { ids } = await walk(sql, { ...order, limit }, async () => {
          // Each change happens once: rows inserted ahead of the cursor as fast as a walk of one
          // row per page reads them (ids ascending, NULLs last) would rightly never let it end.
          if (step >= changes.length) return;
          const [insert, pick] = changes[step++]!;
          if (insert) {
            await seed(sql, 1);
          } else {
            const rows = await sql<Row[]>`SELECT id FROM things ORDER BY id`;
            const victim = rows[pick % rows.length];
            if (victim) {
              await sql`DELETE FROM things WHERE id = ${victim.id}`;
              deleted.add(victim.id);
            }
          }
        });
        assertEquals(ids.length, new Set(ids).size, "no row twice");
        for (const id of before) {
          if (!deleted.has(id)) assert(ids.includes(id), `row ${id} was skipped`);
        }
      },
    ),
    { numRuns: 25 },
  );
});

Deno.test("cursorPage() refuses a cursor it did not hand out, or one for another query", async (t) => {
  await using db = await scratch();
  const { sql } = db;
  await seed(sql, 10);
  const key = await importContextKey("cursor-test-secret-of-at-least-32-chars");
  const scope = { key, list: "listThings", organizationId: ORG };
  const page = (query: CursorQuery & Record<string, unknown>, over = scope) =>
    cursorPage(
      sql,
      THINGS,
      { where: ofOrg(sql), query, pageSizeMax: 200, scope: over },
      (rows: Row[]) => rows,
    );
  const first = await page({ limit: 3, status: "open", sortField: "name" });
  const cursor = first.nextCursor!;
  assert.equal(typeof cursor, "string");

  const refusal = async (query: CursorQuery & Record<string, unknown>, over = scope) => {
    const error = await page(query, over).then(() => null, (e: unknown) => e);
    assert(error instanceof ApiError, "refused with a 400");
    assertEquals([error.code, error.details?.[0]?.path], ["validation_error", "cursor"]);
    return error.message;
  };

  await t.step("the same query continues", async () => {
    const next = await page({ limit: 3, status: "open", sortField: "name", cursor });
    assert(next.items.length > 0);
  });

  await t.step("an altered or made-up cursor", async () => {
    const [payload, mac] = cursor.split(".");
    const flipped = `${payload!.slice(0, -2)}${payload!.at(-2) === "A" ? "B" : "A"}${
      payload!.at(-1)
    }.${mac}`;
    for (const bad of [flipped, `${payload}.${mac!.slice(1)}`, "abc", "a.b.c", "%%%"]) {
      assert.match(
        await refusal({ limit: 3, status: "open", sortField: "name", cursor: bad }),
        /not a cursor this list handed out/,
      );
    }
  });

  await t.step("changed filters, search or sort", async () => {
    for (
      const changed of [
        { status: "closed", sortField: "name" },
        { status: "open", sortField: "price" },
        { status: "open", sortField: "name", sortDirection: "desc" as const },
        { status: "open", sortField: "name", search: "x" },
        { status: "open", sortField: "name", filters: "[]" },
      ]
    ) {
      assert.match(
        await refusal({ limit: 3, ...changed, cursor }),
        /other filters, search or sort/,
      );
    }
  });

  await t.step("another list or another organisation", async () => {
    assert.match(
      await refusal({ limit: 3, status: "open", sortField: "name", cursor }, {
        ...scope,
        list: "listOtherThings",
      }),
      /other filters/,
    );
    assert.match(
      await refusal({ limit: 3, status: "open", sortField: "name", cursor }, {
        ...scope,
        organizationId: OTHER_ORG,
      }),
      /other filters/,
    );
  });

  await t.step("the limit may change between pages", async () => {
    const next = await page({ limit: 1, status: "open", sortField: "name", cursor });
    assertEquals(next.items.length, 1);
  });
});

Deno.test("listSpec() reads the named filters from the query and refuses a list that disagrees with it", () => {
  assertEquals(THINGS.named, ["status"]);
  const query = (named: Record<string, z.ZodType>, search = false) =>
    offsetListQuery({ sortFields: ["name"], named, search });
  const base = { from: "things", select: "id", fields: FIELDS };
  const order = { field: "name", direction: "asc" as const };
  assert.throws(
    () => listSpec(query({ colour: z.string().optional() }), { ...base, order }),
    /no field "colour"/,
  );
  assert.throws(
    () => listSpec(offsetListQuery({ sortFields: ["weight"] }), { ...base, order }),
    /no field "weight"/,
  );
  assert.throws(() => listSpec(query({}, true), { ...base, order }), /search function/);
  assert.throws(
    () => listSpec(query({}), { ...base, order, search: "things_matching" }),
    /search function/,
  );
  assert.throws(
    () => listSpec(query({}), { ...base, order: { field: "size", direction: "asc" } }),
    /no field "size"/,
  );
});
