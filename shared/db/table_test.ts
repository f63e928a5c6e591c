import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { col, defineTable, enumRank, type ResourceOf, type RowOf } from "./table.ts";
import { connect } from "./mod.ts";
import { createTestDatabase } from "../testing/db.ts";
import { ApiError } from "../http/errors.ts";

const TIERS = ["standard", "gold", "wholesale"] as const;

const widgets = defineTable({
  name: "widgets",
  tenant: true,
  noun: "Widget",
  columns: {
    id: col.uuid(),
    companyName: col.text().filterable(),
    tier: col.enum(TIERS).filterable({ sortColumn: enumRank(TIERS, "tier"), sortType: "integer" }),
    unitPrice: col.number().nullable().filterable(),
    amountText: col.decimalText().named("amount"),
    tags: col.textArray(),
    bands: col.json<{ from: number }[]>(),
    dueOn: col.date().nullable(),
    isArchived: col.boolean(),
    createdAt: col.timestamp().filterable(),
  },
  references: {},
});

// The types a store gets, checked at compile time.
type WidgetRow = RowOf<typeof widgets>;
type Widget = ResourceOf<typeof widgets>;
const _row: WidgetRow["amount"] = "1.50";
const _price: Widget["unitPrice"] = null;
const _tier: Widget["tier"] = "gold";
void [_row, _price, _tier];

Deno.test("defineTable() lists the columns in the resource's order, named by convention", () => {
  assertEquals(
    widgets.select,
    "id, company_name, tier, unit_price, amount, tags, bands, due_on, is_archived, created_at",
  );
  assert(widgets.selectAs("w").startsWith("w.id, w.company_name, w.tier"));
  assertEquals(widgets.columnNames.amountText, "amount");
});

Deno.test("defineTable() maps a row to the resource by the columns' types, documents untouched", () => {
  const created = new Date("2026-11-28T01:02:03.004Z");
  const bands = [{ from: 1, "odd_key": "kept as stored" }] as unknown as { from: number }[];
  const resource = widgets.read({
    id: "0193a1b2-4c5d-7e6f-8a90-1b2c3d4e5f60",
    company_name: "Acme",
    tier: "gold",
    unit_price: "12.3400",
    amount: "1.50",
    tags: ["a"],
    bands,
    due_on: null,
    is_archived: false,
    created_at: created,
  });
  assertEquals(resource, {
    id: "0193a1b2-4c5d-7e6f-8a90-1b2c3d4e5f60",
    companyName: "Acme",
    tier: "gold",
    unitPrice: 12.34,
    amountText: "1.50",
    tags: ["a"],
    bands,
    dueOn: null,
    isArchived: false,
    createdAt: "2026-11-28T01:02:03.004Z",
  });
  assertEquals(Object.keys(resource)[1], "companyName", "in the declared order");
  assert.equal(resource.bands, bands, "a json value is the stored one, not a copy with new keys");
});

Deno.test("defineTable() gives lists the filterable fields only, with their options", () => {
  const fields = widgets.fields();
  assertEquals(Object.keys(fields), ["companyName", "tier", "unitPrice", "createdAt"]);
  assertEquals(fields.tier, {
    column: "tier",
    type: "enum",
    nullable: false,
    sortColumn: "array_position(ARRAY['standard','gold','wholesale']::text[], tier)",
    sortType: "integer",
    values: TIERS,
  });
  assertEquals(fields.unitPrice.nullable, true);
  assertEquals(widgets.fields("w").companyName.column, "w.company_name");
});

Deno.test("defineTable() finds and locks a row of the organisation only, 404 otherwise", async () => {
  const db = await createTestDatabase();
  const sql = connect(db.url, { schema: "public", max: 2 });
  try {
    await sql`CREATE TABLE widgets (
      id uuid PRIMARY KEY, organization_id uuid NOT NULL, company_name text NOT NULL,
      tier text NOT NULL, unit_price numeric, amount numeric NOT NULL, tags text[] NOT NULL,
      bands jsonb NOT NULL, due_on date, is_archived boolean NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now())`;
    const org = crypto.randomUUID();
    const other = crypto.randomUUID();
    const id = crypto.randomUUID();
    await sql`INSERT INTO widgets VALUES (${id}, ${org}, 'Acme', 'gold', 2.5, 1.5, '{x}',
      '[{"from": 1}]', '2026-12-01', false, now())`;
    const row = await widgets.find(sql, org, id);
    assertEquals(widgets.read(row!).unitPrice, 2.5);
    assertEquals(widgets.read(row!).dueOn, "2026-12-01");
    assertEquals(await widgets.find(sql, other, id), null, "another organisation's is not found");
    await sql.begin(async (tx) => {
      assertEquals((await widgets.lock(tx, org, id)).company_name, "Acme");
      await assert.rejects(
        () => widgets.lock(tx, other, id),
        (error: unknown) =>
          error instanceof ApiError && error.status === 404 &&
          error.message.includes("Widget"),
      );
    });
    const where = widgets.ofOrganization(org, "w");
    const [counted] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM widgets w WHERE ${where(sql)}`;
    assertEquals(counted?.n, 1);
  } finally {
    await sql.end();
    await db.drop();
  }
});
