/**
 * The event catalogue is the truth about what is emitted: every listed name comes out of some
 * operation, and nothing comes out that is not listed. Operations run through the real gateway;
 * what they emitted is read back from every outbox.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect } from "@printshop/shared/db";
import { EVENT_DEFINITIONS } from "@printshop/shared/events";
import { startTestStack, type TestStack } from "@printshop/shared/testing";

type Json = Record<string, unknown>;

Deno.test("every catalogue event is emitted by an operation, and nothing else is", async () => {
  await using stack: TestStack = await startTestStack();
  const shop = await stack.tenant();
  const send = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await stack.call(shop.apiKey, method, path, body);
    const json = await res.json() as Json;
    if (!res.ok) {
      const errors = (await stack.logs()).split("\n").filter((l) => l.includes('"error"'));
      assert.fail(`${method} ${path}: ${res.status} ${JSON.stringify(json)}\n${errors.join("\n")}`);
    }
    return json.data as Json;
  };

  const bands = [{ from: 1, markupType: "percentage", markupValue: 50 }];
  const markup = await send("POST", "/v1/markup-groups", { name: "M", lane: "garment", bands });
  await send("PATCH", `/v1/markup-groups/${markup.id}`, { name: "M2" });
  const quote = await send("POST", "/v1/quotes", { reference: "Catalogue" });
  await send("PATCH", `/v1/quotes/${quote.id}`, { reference: "Catalogue 2" });
  const group = await send("POST", `/v1/quotes/${quote.id}/groups`, { name: "G" });
  await send("PATCH", `/v1/quote-groups/${group.id}`, { name: "G2" });
  const line = await send("POST", `/v1/quote-groups/${group.id}/lines`, {
    lineType: "Garment",
    productName: "Tee",
  });
  await send("PATCH", `/v1/quote-lines/${line.id}`, { productName: "Tee 2" });
  const variant = await send("POST", `/v1/quote-lines/${line.id}/variants`, {
    size: "M",
    quantity: 2,
    buyPrice: 4,
  });
  await send("PATCH", `/v1/quote-variants/${variant.id}`, { quantity: 3 });
  const decoration = await send("POST", `/v1/quote-groups/${group.id}/decorations`, {
    quantity: 3,
    unitCost: 1,
  });
  await send("PATCH", `/v1/quote-decorations/${decoration.id}`, { quantity: 4 });
  await send("POST", `/v1/quote-groups/${group.id}/reorder`, {
    items: [{ id: decoration.id, kind: "decoration" }, { id: line.id, kind: "line" }],
  });
  await send("DELETE", `/v1/quote-decorations/${decoration.id}`);
  await send("DELETE", `/v1/quote-variants/${variant.id}`);
  await send("DELETE", `/v1/quote-lines/${line.id}`);
  await send("DELETE", `/v1/quote-groups/${group.id}`);
  await send("POST", `/v1/quotes/${quote.id}/status`, { status: "sent" });
  await send("DELETE", `/v1/quotes/${quote.id}`);
  await send("DELETE", `/v1/markup-groups/${markup.id}`);
  // A new default replaces the first quote's default GST rate, which is updated to non-default.
  await send("POST", "/v1/tax-rates", { name: "VAT", ratePct: 20, isDefault: true });
  await stack.admin("DELETE", `/admin/api-keys/${shop.keyId}`);
  const partner = await stack.admin<{ data: { id: string } }>("POST", "/admin/partner-apps", {
    name: "Catalogue Connector",
    scopes: ["quotes.read"],
  });
  await stack.admin("POST", `/admin/partner-apps/${partner.data.id}/grants`, {
    organizationId: shop.organizationId,
    scopes: ["quotes.read"],
  });

  const sql = connect(stack.db.url, { schema: "public", max: 1 });
  try {
    const schemas = await sql<{ schema: string }[]>`
      SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'outbox'`;
    assert(schemas.length >= 6, "every service and the gateway have an outbox");
    const emitted = new Set<string>();
    for (const { schema } of schemas) {
      const rows = await sql.unsafe<{ type: string }[]>(
        `SELECT DISTINCT type FROM "${schema}".outbox`,
      );
      for (const row of rows) emitted.add(row.type);
    }
    const listed = EVENT_DEFINITIONS.map((d) => d.type);
    assertEquals([...emitted].sort(), [...listed].sort());
  } finally {
    await sql.end();
  }
});
