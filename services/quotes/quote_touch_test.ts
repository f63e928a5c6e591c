/**
 * The triggers that touch a quote when its rows or its client change (migrations 0004–0006) find
 * the quote by key however the table grew since the connection first ran them. A connection of
 * the service's pool lives for the process; a trigger's statement planned once when the shop had
 * a handful of quotes (a sequential scan is the right plan then) must not go on scanning every
 * quote of every shop on each row write once there are thousands.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { serviceHarness } from "@printshop/shared/testing";
import { quotesService } from "./app.ts";

type Json = { id: string };

Deno.test("a row write touches its quote by key, also after the quotes table grew", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const call = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await h.request(method, path, {
      organizationId: org,
      ...(body === undefined ? {} : { body }),
    });
    const json = await res.json() as { data: Json };
    assertEquals(res.status < 300, true, `${method} ${path}: ${JSON.stringify(json)}`);
    return json.data;
  };
  const quote = await call("POST", "/v1/quotes", { reference: "Touched" });
  const group = await call("POST", `/v1/quotes/${quote.id}/groups`, { name: "Tees" });
  const line = await call("POST", `/v1/quote-groups/${group.id}/lines`, {
    lineType: "Garment",
    productName: "Classic tee",
  });
  const variant = await call("POST", `/v1/quote-lines/${line.id}/variants`, {
    size: "M",
    colour: "Black",
    quantity: 6,
    buyPrice: 6.25,
    markupType: "percentage",
    markupValue: 40,
  });
  const client = crypto.randomUUID();

  // One connection, as a pooled one would be: every trigger runs once while the shop is small…
  const conn = await h.sql.reserve();
  try {
    // The backend's scans of `quotes` not yet sent to the statistics (earlier transactions'
    // included, so a transaction's own are the difference).
    const scans = async (): Promise<number> => {
      const [row] = await conn<{ n: number }[]>`
        SELECT seq_scan::int AS n FROM pg_stat_xact_user_tables WHERE relname = 'quotes'`;
      return row?.n ?? 0;
    };
    const writes = async (): Promise<number> => {
      await conn.unsafe("BEGIN");
      try {
        const before = await scans();
        await conn`UPDATE quote_variants SET quantity = quantity + 1 WHERE id = ${variant.id}`;
        await conn`INSERT INTO quote_groups (id, organization_id, quote_id, name, sort_order)
          VALUES (${crypto.randomUUID()}, ${org}, ${quote.id}, 'Caps', 99)`;
        await conn`DELETE FROM quote_groups WHERE quote_id = ${quote.id} AND sort_order = 99`;
        await conn`INSERT INTO crm_customers (organization_id, id, name, is_archived, occurred_at,
            event_id)
          VALUES (${org}, ${client}, 'Acme', false, now(), ${crypto.randomUUID()})
          ON CONFLICT (organization_id, id) DO UPDATE SET name = excluded.name || ''`;
        return await scans() - before;
      } finally {
        await conn.unsafe("ROLLBACK");
      }
    };
    await writes();
    // …then the table grows to thousands of quotes, as a shop's does (no ANALYZE in between).
    await h.sql`
      INSERT INTO quotes (id, organization_id, quote_number, quote_ref)
      SELECT gen_random_uuid(), gen_random_uuid(), 1, 'Q-1' FROM generate_series(1, 20000)`;
    assertEquals(await writes(), 0, "sequential scans of the quotes table");
  } finally {
    conn.release();
  }
});
