/**
 * The quotes service's events, as the contracts declare them, are the truth about what it
 * emits: every declared name comes out of some operation, and nothing else comes out.
 * Operations run through the real gateway; what they emitted is read back from the outbox.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { declaredBy, emittedBy, startTestStack, type TestStack } from "@printshop/shared/testing";

type Json = Record<string, unknown>;

Deno.test("every quotes event is emitted by an operation, and nothing else is", async () => {
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

  assertEquals(await emittedBy(stack, "quotes"), declaredBy("quotes"));
});
