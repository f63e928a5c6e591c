/**
 * The triggers that touch a quote when its rows or its client change (migrations 0004–0007) find
 * the quote by key however the table grew since the connection first ran them. A connection of
 * the service's pool lives for the process; a trigger's statement planned once when the shop had
 * a handful of quotes (a sequential scan is the right plan then) must not go on scanning every
 * quote of every shop on each row write once there are thousands. And a transaction touches a
 * quote once: later row statements find it cleared and run nothing, unless a store or a rolled
 * back savepoint undid the clearing.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import type { Config } from "./config.ts";
import { quotesService } from "./app.ts";

type Json = { id: string };

/** A quote of this test's own organisation with one group, one Garment line and one variant. */
async function quoteWithVariant(h: ServiceHarness<Config>, reference: string): Promise<{
  org: string;
  quote: Json;
  line: Json;
  variant: Json;
  call: (method: string, path: string, body?: unknown) => Promise<Json>;
}> {
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
  const quote = await call("POST", "/v1/quotes", { reference });
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
  return { org, quote, line, variant, call };
}

Deno.test("a row write touches its quote by key, also after the quotes table grew", async () => {
  await using h = await serviceHarness(quotesService);
  const { org, quote, variant } = await quoteWithVariant(h, "Touched");
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

Deno.test("a transaction touches a quote once, and touches it again after a store or a rollback", async (t) => {
  await using h = await serviceHarness(quotesService);
  const { org, quote, line, variant, call } = await quoteWithVariant(h, "Touched once");
  const conn = await h.sql.reserve();
  const stored = async (): Promise<string | null> => {
    const [row] = await conn<{ document_with_costs: string | null }[]>`
      SELECT document_with_costs FROM quotes WHERE id = ${quote.id}`;
    return row!.document_with_costs;
  };
  // A store as quote_documents.ts makes one (it sets the documents, so the trigger keeps them).
  const store = async (): Promise<void> => {
    await conn`UPDATE quotes SET document_with_costs = '{"stored":true}',
      document_without_costs = '{"stored":true}' WHERE id = ${quote.id}`;
  };
  const quotesIndexScans = async (): Promise<number> => {
    const [row] = await conn<{ n: number }[]>`
      SELECT idx_scan::int AS n FROM pg_stat_xact_user_tables WHERE relname = 'quotes'`;
    return row?.n ?? 0;
  };
  const inTransaction = async (steps: () => Promise<void>): Promise<void> => {
    await conn.unsafe("BEGIN");
    try {
      await steps();
    } finally {
      await conn.unsafe("ROLLBACK");
    }
  };
  try {
    await t.step(
      "a later row statement of the transaction runs no statement on quotes",
      () =>
        inTransaction(async () => {
          await conn`UPDATE quote_variants SET quantity = quantity + 1 WHERE id = ${variant.id}`;
          const before = await quotesIndexScans();
          // The line row is not this transaction's, so no foreign key check reads quotes either.
          await conn`UPDATE quote_lines SET quantity = quantity + 1 WHERE id = ${line.id}`;
          assertEquals(await quotesIndexScans() - before, 0, "index scans of quotes");
          assertEquals(await stored(), null);
        }),
    );

    await t.step(
      "a store after the touch is cleared by the next row change",
      () =>
        inTransaction(async () => {
          await conn`UPDATE quote_variants SET quantity = quantity + 1 WHERE id = ${variant.id}`;
          await store();
          assertEquals(await stored(), '{"stored":true}');
          await conn`UPDATE quote_lines SET quantity = quantity + 1 WHERE id = ${line.id}`;
          assertEquals(await stored(), null);
        }),
    );

    await t.step("a touch rolled back with its savepoint is made again", async () => {
      await store();
      await inTransaction(async () => {
        await conn.unsafe("SAVEPOINT before_change");
        await conn`UPDATE quote_variants SET quantity = quantity + 1 WHERE id = ${variant.id}`;
        assertEquals(await stored(), null);
        await conn.unsafe("ROLLBACK TO SAVEPOINT before_change");
        assertEquals(await stored(), '{"stored":true}');
        await conn`UPDATE quote_lines SET quantity = quantity + 1 WHERE id = ${line.id}`;
        assertEquals(await stored(), null);
      });
    });

    await t.step(
      "the lock of a change clears the documents, and a refused change keeps them",
      async () => {
        assertEquals(await stored(), '{"stored":true}');
        await conn`UPDATE quotes SET status = 'sent' WHERE id = ${quote.id}`;
        await store();
        const refused = await h.request("PATCH", `/v1/quote-variants/${variant.id}`, {
          organizationId: org,
          body: { quantity: 9 },
        });
        assertEquals(refused.status, 409);
        await refused.body?.cancel();
        assertEquals(await stored(), '{"stored":true}');
        await conn`UPDATE quotes SET status = 'draft' WHERE id = ${quote.id}`;
        await store();
        await call("PATCH", `/v1/quote-variants/${variant.id}`, { quantity: 9 });
        assertEquals(await stored(), null);
      },
    );
  } finally {
    conn.release();
  }
});
