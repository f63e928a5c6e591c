/**
 * Pricing through the quotes API: rows built only with the public endpoints must report the
 * pricing.md worked example to the cent, re-band group rows, keep manual sells, hide costs, and
 * follow the quote lifecycle.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { COSTS_READ_FIELDS } from "@printshop/shared/costs";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";

type Json = Record<string, unknown>;

interface Api {
  h: ServiceHarness<Config>;
  org: string;
  call(method: string, path: string, body?: unknown, scopes?: readonly string[]): Promise<Json>;
  expect(
    status: number,
    method: string,
    path: string,
    body?: unknown,
    scopes?: readonly string[],
  ): Promise<Json>;
}

async function api(): Promise<Api> {
  const h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const expect = async (
    status: number,
    method: string,
    path: string,
    body?: unknown,
    scopes: readonly string[] = ALL_SCOPES,
  ): Promise<Json> => {
    const res = await h.request(method, path, {
      organizationId: org,
      scopes,
      ...(body === undefined ? {} : { body }),
    });
    const json = await res.json() as Json;
    assertEquals(res.status, status, `${method} ${path}: ${JSON.stringify(json)}`);
    return json;
  };
  return {
    h,
    org,
    expect,
    call: async (method, path, body, scopes) => {
      const json = await expect(method === "POST" ? 201 : 200, method, path, body, scopes);
      return json.data as Json;
    },
  };
}

async function buildWorkedExample(
  a: Api,
): Promise<{ quoteId: string; groupId: string; lineId: string }> {
  const quote = await a.call("POST", "/v1/quotes", { reference: "Worked example" });
  const group = await a.call("POST", `/v1/quotes/${quote.id}/groups`, { name: "Staff tees" });
  const line = await a.call("POST", `/v1/quote-groups/${group.id}/lines`, {
    lineType: "Garment",
    productName: "Classic tee",
  });
  await a.call("POST", `/v1/quote-lines/${line.id}/variants`, {
    size: "M",
    colour: "Black",
    quantity: 10,
    buyPrice: 5,
    extraCost: 0.5,
    markupType: "percentage",
    markupValue: 40,
  });
  await a.call("POST", `/v1/quote-lines/${line.id}/variants`, {
    size: "L",
    colour: "Black",
    quantity: 5,
    buyPrice: 5,
    extraCost: 0,
    markupType: "fixed",
    markupValue: 3,
  });
  await a.call("POST", `/v1/quote-lines/${line.id}/variants`, {
    isCustomLine: true,
    quantity: 1,
    buyPrice: 20,
    markupType: "percentage",
    markupValue: 0,
  });
  await a.call("POST", `/v1/quote-groups/${group.id}/decorations`, {
    quantity: 15,
    unitCost: 1.2,
    markupType: "percentage",
    markupValue: 50,
    setupCost: 30,
    setupMarkupType: "fixed",
    setupMarkupValue: 15,
    includeSetupCost: true,
    position: "Front",
  });
  await a.call("POST", `/v1/quote-groups/${group.id}/lines`, {
    lineType: "Discount",
    productName: "Loyalty discount",
    valueType: "Percentage",
    percentage: 10,
  });
  return { quoteId: quote.id as string, groupId: group.id as string, lineId: line.id as string };
}

Deno.test("the quotes API reproduces the pricing.md worked example to the cent", async () => {
  const a = await api();
  try {
    const { quoteId } = await buildWorkedExample(a);
    const quote = await a.call("GET", `/v1/quotes/${quoteId}`);
    assertEquals([quote.subtotalExGst, quote.gstAmount, quote.totalIncGst], [188.1, 18.81, 206.91]);
    assertEquals([quote.taxName, quote.taxRatePct], ["GST", 10]);
    const [group] = quote.groups as Json[];
    assertEquals(group!.totalQuantity, 15);
    const [garment, discount] = group!.lines as Json[];
    assertEquals([garment!.quantity, garment!.unitPriceExGst], [15, 7.8]);
    assertEquals(
      (garment!.variants as Json[]).map((v) => v.unitPriceExGst),
      [7.7, 8, 20],
    );
    assertEquals(discount!.lineType, "Discount");
    const [decoration] = group!.decorations as Json[];
    assertEquals([decoration!.baseUnitCost, decoration!.baseSetupCost], [1.8, 45]);
    // One shared order: line 1, decoration 2, discount 3.
    assertEquals([garment!.sortOrder, decoration!.sortOrder, discount!.sortOrder], [1, 2, 3]);
  } finally {
    await a.h.close();
  }
});

Deno.test("a new line moves the totals only when it adds to them, and always marks the quote changed", async () => {
  const a = await api();
  try {
    const { quoteId, groupId } = await buildWorkedExample(a);
    let before = await a.call("GET", `/v1/quotes/${quoteId}`);
    const totals = (q: Json): unknown[] => [q.subtotalExGst, q.gstAmount, q.totalIncGst];
    // Adds nothing: an empty Garment line, and a Service line of 0 units.
    for (const body of [{ lineType: "Garment" }, { lineType: "Service", unitPriceExGst: 9 }]) {
      await a.call("POST", `/v1/quote-groups/${groupId}/lines`, { productName: "x", ...body });
      const after = await a.call("GET", `/v1/quotes/${quoteId}`);
      assertEquals(totals(after), totals(before));
      assert(String(after.updatedAt) > String(before.updatedAt), "updatedAt moves");
      before = after;
    }
    // Adds 2 × 10 ex GST; the worked example's 10 % discount line takes 2 of it back.
    await a.call("POST", `/v1/quote-groups/${groupId}/lines`, {
      lineType: "Service",
      productName: "Artwork",
      quantity: 2,
      unitPriceExGst: 10,
    });
    const after = await a.call("GET", `/v1/quotes/${quoteId}`);
    assertEquals(totals(after), [206.1, 20.61, 226.71]);
  } finally {
    await a.h.close();
  }
});

Deno.test("cost and margin fields are absent without costs.read, and setting one is refused", async () => {
  const a = await api();
  try {
    const { quoteId, lineId } = await buildWorkedExample(a);
    const noCosts = ALL_SCOPES.filter((s) => s !== "costs.read");
    const quote = await a.call("GET", `/v1/quotes/${quoteId}`, undefined, noCosts);
    const text = JSON.stringify(quote);
    for (const field of COSTS_READ_FIELDS) {
      assert(!text.includes(`"${field}"`), `${field} leaked`);
    }
    const list = await a.call("GET", "/v1/quotes", undefined, noCosts);
    for (const field of COSTS_READ_FIELDS) {
      assert(!JSON.stringify(list).includes(`"${field}"`), `${field} leaked in the list`);
    }
    // A sell price and its markup give the cost back, so a markup is as closed as a cost.
    for (const body of [{ buyPrice: 2 }, { markupType: "percentage" }, { markupValue: 33 }]) {
      const refused = await a.expect(403, "POST", `/v1/quote-lines/${lineId}/variants`, {
        size: "XS",
        quantity: 1,
        ...body,
      }, noCosts);
      assertEquals(refused.error, "insufficient_scope");
      assert(String(refused.message).includes("costs.read"));
    }
    const created = await a.call("POST", `/v1/quote-lines/${lineId}/variants`, {
      size: "S",
      quantity: 2,
      unitPriceExGst: 9.5,
    }, noCosts);
    assertEquals([created.buyPrice, created.markupType, created.markupValue], [
      undefined,
      undefined,
      undefined,
    ]);
    assertEquals(created.unitPriceExGst, 9.5);
    const withCosts = await a.call("GET", `/v1/quotes/${quoteId}`);
    assert(JSON.stringify(withCosts).includes('"buyPrice":5'));
  } finally {
    await a.h.close();
  }
});

Deno.test("group rows re-band on quantity change and manual rows keep their sell on cost change", async () => {
  const a = await api();
  try {
    await a.h.sql`
      INSERT INTO markup_groups (id, organization_id, name, lane, is_default, bands)
      VALUES (${crypto.randomUUID()}, ${a.org}, 'Tees', 'garment', true,
        ${
      a.h.sql.json([
        { from: 1, markupType: "percentage", markupValue: 60 },
        { from: 12, markupType: "percentage", markupValue: 50 },
        { from: 48, markupType: "percentage", markupValue: 40 },
      ])
    })`;
    const quote = await a.call("POST", "/v1/quotes", {});
    const group = await a.call("POST", `/v1/quotes/${quote.id}/groups`, { name: "G" });
    const line = await a.call("POST", `/v1/quote-groups/${group.id}/lines`, {
      lineType: "Garment",
      productName: "Tee",
    });
    const banded = await a.call("POST", `/v1/quote-lines/${line.id}/variants`, {
      size: "M",
      quantity: 15,
      buyPrice: 5,
      extraCost: 0.5,
      markupSource: "group",
    });
    assertEquals([banded.markupValue, banded.unitPriceExGst], [50, 8.25]);
    const raised = await a.call("PATCH", `/v1/quote-variants/${banded.id}`, { quantity: 50 });
    assertEquals([raised.markupValue, raised.unitPriceExGst], [40, 7.7]);

    const manual = await a.call("POST", `/v1/quote-lines/${line.id}/variants`, {
      size: "L",
      quantity: 1,
      buyPrice: 5.5,
      unitPriceExGst: 8.25,
    });
    assertEquals([manual.markupSource, manual.unitPriceExGst], ["manual", 8.25]);
    const pricier = await a.call("PATCH", `/v1/quote-variants/${manual.id}`, { buyPrice: 6.5 });
    assertEquals(pricier.unitPriceExGst, 8.25, "a manual row keeps its sell");
    // Adding the manual row (quantity 1) took the line to 51: the group row stays at 40 %.
    const after = await a.call("GET", `/v1/quotes/${quote.id}`);
    const lines = (after.groups as Json[])[0]!.lines as Json[];
    assertEquals(lines[0]!.quantity, 51);
  } finally {
    await a.h.close();
  }
});

Deno.test("the quote lifecycle refuses illegal moves, freezes sent quotes and re-bands on reopen", async () => {
  const a = await api();
  try {
    const { quoteId, lineId } = await buildWorkedExample(a);
    const conflict = await a.expect(409, "POST", `/v1/quotes/${quoteId}/status`, {
      status: "approved",
    });
    assertEquals(conflict.error, "conflict");
    const status = async (body: Json): Promise<Json> =>
      (await a.expect(200, "POST", `/v1/quotes/${quoteId}/status`, body)).data as Json;
    const sent = await status({ status: "sent", sentToEmail: "buyer@client.test" });
    assertEquals([sent.status, sent.sentToEmail], ["sent", "buyer@client.test"]);
    assert(typeof sent.sentAt === "string");
    const frozen = await a.expect(409, "POST", `/v1/quote-lines/${lineId}/variants`, {
      quantity: 1,
    });
    assertEquals(frozen.error, "conflict");
    // References an integrator keeps in step may still change.
    const linked = await a.call("PATCH", `/v1/quotes/${quoteId}`, { jobId: "JOB-77" });
    assertEquals(linked.jobId, "JOB-77");
    await status({ status: "approved" });
    const reopened = await status({ status: "draft" });
    assertEquals([reopened.status, reopened.totalIncGst], ["draft", 206.91]);
    await a.expect(400, "POST", `/v1/quotes/${quoteId}/status`, { status: "paid" });
  } finally {
    await a.h.close();
  }
});
