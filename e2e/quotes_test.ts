/**
 * The quotes service through the real gateway: the pricing.md worked example built only with
 * public endpoints, cost fields by scope, and another organisation kept out.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { startTestStack, type TestStack } from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";

type Json = Record<string, unknown>;

Deno.test("a quote built through the gateway reports the worked example's totals", async (t) => {
  await using stack: TestStack = await startTestStack();
  const shop = await stack.tenant();
  const send = async (
    status: number,
    method: string,
    path: string,
    body?: unknown,
    key = shop.apiKey,
  ): Promise<Json> => {
    const res = await stack.call(key, method, path, body);
    const json = await res.json() as Json;
    assertEquals(res.status, status, `${method} ${path}: ${JSON.stringify(json)}`);
    return json.data as Json;
  };

  const quote = await send(201, "POST", "/v1/quotes", { reference: "Worked example" });
  const group = await send(201, "POST", `/v1/quotes/${quote.id}/groups`, { name: "Staff" });
  const line = await send(201, "POST", `/v1/quote-groups/${group.id}/lines`, {
    lineType: "Garment",
    productName: "Classic tee",
  });
  const variants = [
    {
      size: "M",
      colour: "Black",
      quantity: 10,
      buyPrice: 5,
      extraCost: 0.5,
      markupType: "percentage",
      markupValue: 40,
    },
    {
      size: "L",
      colour: "Black",
      quantity: 5,
      buyPrice: 5,
      extraCost: 0,
      markupType: "fixed",
      markupValue: 3,
    },
    { isCustomLine: true, quantity: 1, buyPrice: 20, markupType: "percentage", markupValue: 0 },
  ];
  for (const v of variants) await send(201, "POST", `/v1/quote-lines/${line.id}/variants`, v);
  await send(201, "POST", `/v1/quote-groups/${group.id}/decorations`, {
    quantity: 15,
    unitCost: 1.2,
    markupType: "percentage",
    markupValue: 50,
    setupCost: 30,
    setupMarkupType: "fixed",
    setupMarkupValue: 15,
    includeSetupCost: true,
  });
  await send(201, "POST", `/v1/quote-groups/${group.id}/lines`, {
    lineType: "Discount",
    productName: "Loyalty",
    valueType: "Percentage",
    percentage: 10,
  });

  await t.step("the totals match pricing.md to the cent", async () => {
    const read = await send(200, "GET", `/v1/quotes/${quote.id}`);
    assertEquals([read.subtotalExGst, read.gstAmount, read.totalIncGst], [188.1, 18.81, 206.91]);
  });

  await t.step("a key without costs.read sees no cost field", async () => {
    const org = shop.organizationId;
    const key = await stack.admin<{ data: { apiKey: string } }>(
      "POST",
      `/admin/organizations/${org}/api-keys`,
      { scopes: ALL_SCOPES.filter((s) => s !== "costs.read") },
    );
    const read = await send(200, "GET", `/v1/quotes/${quote.id}`, undefined, key.data.apiKey);
    for (const field of ["buyPrice", "extraCost", "setupCost", "unitCost"]) {
      assert(!JSON.stringify(read).includes(`"${field}"`), `${field} leaked`);
    }
  });

  await t.step("another organisation cannot reach any of it", async () => {
    const other = await stack.tenant();
    for (
      const [method, path, body] of [
        ["GET", `/v1/quotes/${quote.id}`, undefined],
        ["PATCH", `/v1/quote-lines/${line.id}`, { title: "x" }],
        ["POST", `/v1/quote-lines/${line.id}/variants`, { quantity: 1 }],
        ["DELETE", `/v1/quote-groups/${group.id}`, undefined],
      ] as const
    ) {
      const res = await stack.call(other.apiKey, method, path, body);
      const json = await res.json() as Json;
      assertEquals([res.status, json.error], [404, "not_found"], `${method} ${path}`);
    }
  });
});
