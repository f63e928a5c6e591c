/**
 * The quotes service learns the CRM's customers from their events, end to end: real processes,
 * the CRM's outbox and relay, the event bus, and the quotes process's own consumer group. A
 * quote names its client (`clientName`), the quote list finds it by that name, a rename follows,
 * and a quotes process that was down catches up on the renames it missed.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startTestStack, type TestStack } from "@printshop/shared/testing";
import { data, eventually, type Json, openDb, send } from "./_webhooks.ts";

interface QuoteJson {
  id: string;
  clientId: string | null;
  clientName: string | null;
}

Deno.test("a quote carries its client's name from the CRM's events, and catches up after a stop", async (t) => {
  await using stack: TestStack = await startTestStack();
  await using db = openDb(stack);
  const shop = await stack.tenant();
  const call = async (status: number, method: string, path: string, body?: unknown) =>
    data(await send(stack, shop.apiKey, status, method, path, body));
  // A word no other field of the quote holds, so a match is the client's name's doing.
  const word = `Quokka${crypto.randomUUID().slice(0, 8)}`;

  /** The quotes `search` finds, once it finds `quoteId` with this clientName. */
  const foundBy = (search: string, quoteId: string, clientName: string) =>
    eventually(
      `GET /v1/quotes?search=${search} to find the quote named "${clientName}"`,
      async () => {
        const page = await call(200, "GET", `/v1/quotes?search=${encodeURIComponent(search)}`);
        const items = page.items as QuoteJson[];
        const hit = items.find((q) => q.id === quoteId);
        return hit?.clientName === clientName ? items : undefined;
      },
      20_000,
      async () => JSON.stringify(await call(200, "GET", `/v1/quotes/${quoteId}`)),
    );

  const customer = await call(201, "POST", "/v1/customers", {
    companyName: `Riverside ${word} Bakery`,
  });
  const quote = await call(201, "POST", "/v1/quotes", {
    reference: "Staff tees",
    clientId: customer.id,
  }) as unknown as QuoteJson;
  const unrelated = await call(201, "POST", "/v1/quotes", { reference: "Hoodies" });

  await t.step("the quote list finds the quote by its client's name", async () => {
    const items = await foundBy(word.toLowerCase(), quote.id, `Riverside ${word} Bakery`);
    assertEquals(items.map((q) => q.id), [quote.id]);
    const read = await call(200, "GET", `/v1/quotes/${quote.id}`);
    assertEquals([read.clientId, read.clientName], [customer.id, `Riverside ${word} Bakery`]);
    assertEquals((await call(200, "GET", `/v1/quotes/${unrelated.id}`)).clientName, null);
  });

  await t.step("a rename in the CRM follows", async () => {
    await call(200, "PATCH", `/v1/customers/${customer.id}`, {
      companyName: `Lakeside ${word} Bakehouse`,
    });
    await foundBy("lakeside", quote.id, `Lakeside ${word} Bakehouse`);
    const stale = await call(200, "GET", "/v1/quotes?search=riverside");
    assertEquals(stale.totalCount, 0, "the old name no longer matches");
  });

  await t.step("a quotes process that was down catches up on what it missed", async () => {
    await stack.kill("quotes");
    await call(200, "PATCH", `/v1/customers/${customer.id}`, {
      companyName: `Hillside ${word} Patisserie`,
    });
    await call(200, "PATCH", `/v1/customers/${customer.id}`, { isArchived: true });
    // Both renames are on the bus (the CRM relayed them), and nobody applied them yet.
    await eventually("the CRM's events on the bus", async () => {
      const [row] = await db.sql<{ count: number }[]>`
        SELECT count(*)::int AS count FROM eventbus.messages
        WHERE topic = 'printshop.crm' AND type = 'customer.updated'
          AND aggregate_id = ${customer.id as string}`;
      return row!.count >= 3 ? true : undefined;
    }, 20_000);
    const [known] = await db.sql<{ name: string; is_archived: boolean }[]>`
      SELECT name, is_archived FROM quotes.crm_customers WHERE id = ${customer.id as string}`;
    assertEquals([known?.name, known?.is_archived], [`Lakeside ${word} Bakehouse`, false]);

    await stack.restart("quotes");
    await foundBy("hillside", quote.id, `Hillside ${word} Patisserie`);
    const [caught] = await db.sql<{ name: string; is_archived: boolean }[]>`
      SELECT name, is_archived FROM quotes.crm_customers WHERE id = ${customer.id as string}`;
    assertEquals([caught?.name, caught?.is_archived], [`Hillside ${word} Patisserie`, true]);
    const list = await call(200, "GET", "/v1/quotes");
    const named = (list.items as QuoteJson[]).map((q) => [q.id, q.clientName]);
    assertEquals(
      named.sort(),
      [[quote.id, `Hillside ${word} Patisserie`], [unrelated.id as string, null]].sort(),
    );
  });

  await t.step("a deleted customer leaves the quote without a name", async () => {
    await call(200, "DELETE", `/v1/customers/${customer.id}`);
    await eventually("clientName to clear", async () => {
      const read = await call(200, "GET", `/v1/quotes/${quote.id}`) as Json;
      return read.clientName === null ? read : undefined;
    }, 20_000);
    const page = await call(200, "GET", "/v1/quotes?search=hillside");
    assertEquals(page.totalCount, 0);
    assert(!(await stack.logs()).includes("unreadable payload"), "every event was read");
  });
});
