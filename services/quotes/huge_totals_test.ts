/**
 * Amounts each within its schema's bounds can still multiply into totals no column holds: those
 * writes must be refused with the error envelope (and nothing written), never a 500. The generic
 * bad-input cases of every operation are in the route sweep (`e2e/route_sweep_test.ts`).
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { ErrorEnvelope } from "@printshop/shared/contracts";
import { type ERROR_CODES, PUBLIC_ERROR_CODES } from "@printshop/shared/http";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";

type Json = Record<string, unknown>;

interface Api {
  h: ServiceHarness<Config>;
  send(method: string, path: string, org: string, body?: unknown): Promise<Response>;
  call(method: string, path: string, org: string, body?: unknown): Promise<Json>;
}

async function api(): Promise<Api> {
  const h = await serviceHarness(quotesService);
  const send = (method: string, path: string, org: string, body?: unknown) =>
    h.request(method, path, { organizationId: org, ...(body === undefined ? {} : { body }) });
  return {
    h,
    send,
    call: async (method, path, org, body) => {
      const res = await send(method, path, org, body);
      const json = await res.json() as Json;
      assert(
        res.status === 200 || res.status === 201,
        `${method} ${path}: ${JSON.stringify(json)}`,
      );
      return json.data as Json;
    },
  };
}

const ENVELOPE_KEYS = new Set(["error", "message", "status", "details"]);

/** The response is the error envelope with this status and code (and a detail at `path`). */
async function expectError(
  res: Response,
  status: number,
  code: keyof typeof ERROR_CODES,
  path?: string,
): Promise<void> {
  const text = await res.text();
  const shown = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  assert.notEqual(res.status, 500, `a 500: ${shown}`);
  assertEquals(res.status, status, `expected ${status} ${code}, got ${res.status}: ${shown}`);
  assert(res.headers.get("content-type")?.includes("application/json"), "JSON content type");
  const body = JSON.parse(text) as Json;
  const parsed = ErrorEnvelope.safeParse(body);
  assert(parsed.success, `not the error envelope: ${text}`);
  assertEquals(Object.keys(body).filter((k) => !ENVELOPE_KEYS.has(k)), [], text);
  assertEquals(parsed.data.status, false);
  assertEquals(parsed.data.error, code, text);
  assertEquals(PUBLIC_ERROR_CODES[parsed.data.error], res.status, "the code's own status");
  assert(parsed.data.message.length > 0, "a message");
  if (path !== undefined) {
    assert(
      parsed.data.details?.some((d) => d.path === path),
      `details should name "${path}": ${text}`,
    );
  }
}

/** A draft quote with one empty group. */
async function freshGroup(a: Api, org: string): Promise<{ quoteId: string; groupId: string }> {
  const quote = await a.call("POST", "/v1/quotes", org, {});
  const group = await a.call("POST", `/v1/quotes/${quote.id}/groups`, org, { name: "Big" });
  return { quoteId: quote.id as string, groupId: group.id as string };
}

Deno.test("amounts the schemas allow but whose totals are huge are a 400, never a 500", async (t) => {
  const a = await api();
  try {
    const org = crypto.randomUUID();
    const MAX_QTY = 10_000_000;
    const MAX_AMOUNT = 1_000_000_000;
    const service = { lineType: "Service", productName: "Big run" };
    /** Each probe builds what it needs and returns the request that makes the total huge. */
    const probes: [string, (g: { groupId: string }) => Promise<[string, string, Json]>][] = [
      ["a line of the largest quantity at the largest price", (g) =>
        Promise.resolve([
          "POST",
          `/v1/quote-groups/${g.groupId}/lines`,
          { ...service, quantity: MAX_QTY, unitPriceExGst: MAX_AMOUNT },
        ])],
      ["a subtotal that fits whose total with GST does not", (g) =>
        Promise.resolve([
          "POST",
          `/v1/quote-groups/${g.groupId}/lines`,
          { ...service, quantity: 95_000, unitPriceExGst: MAX_AMOUNT },
        ])],
      ["a variant with a manual sell", async (g) => {
        const line = await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          lineType: "Garment",
          productName: "Tee",
        });
        return ["POST", `/v1/quote-lines/${line.id}/variants`, {
          size: "M",
          quantity: MAX_QTY,
          unitPriceExGst: MAX_AMOUNT,
        }];
      }],
      ["a variant priced from cost and markup", async (g) => {
        const line = await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          lineType: "Garment",
          productName: "Tee",
        });
        return ["POST", `/v1/quote-lines/${line.id}/variants`, {
          size: "M",
          quantity: MAX_QTY,
          buyPrice: MAX_AMOUNT,
          markupType: "percentage",
          markupValue: 0,
        }];
      }],
      ["a decoration", (g) =>
        Promise.resolve([
          "POST",
          `/v1/quote-groups/${g.groupId}/decorations`,
          { quantity: MAX_QTY, baseUnitCost: MAX_AMOUNT },
        ])],
      ["PATCH a line's quantity", async (g) => {
        const line = await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          ...service,
          quantity: 1,
          unitPriceExGst: MAX_AMOUNT,
        });
        return ["PATCH", `/v1/quote-lines/${line.id}`, { quantity: MAX_QTY }];
      }],
      ["PATCH a variant's quantity", async (g) => {
        const line = await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          lineType: "Garment",
          productName: "Tee",
        });
        const variant = await a.call("POST", `/v1/quote-lines/${line.id}/variants`, org, {
          size: "M",
          quantity: 1,
          unitPriceExGst: MAX_AMOUNT,
        });
        return ["PATCH", `/v1/quote-variants/${variant.id}`, { quantity: MAX_QTY }];
      }],
      ["PATCH a decoration's quantity", async (g) => {
        const decoration = await a.call("POST", `/v1/quote-groups/${g.groupId}/decorations`, org, {
          quantity: 1,
          baseUnitCost: MAX_AMOUNT,
        });
        return ["PATCH", `/v1/quote-decorations/${decoration.id}`, { quantity: MAX_QTY }];
      }],
      ["a percentage discount of the largest percentage", async (g) => {
        await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
          ...service,
          quantity: 1,
          unitPriceExGst: MAX_AMOUNT,
        });
        return ["POST", `/v1/quote-groups/${g.groupId}/lines`, {
          lineType: "Discount",
          productName: "Everything off",
          valueType: "Percentage",
          percentage: MAX_AMOUNT,
        }];
      }],
    ];
    for (const [name, build] of probes) {
      await t.step(name, async () => {
        const g = await freshGroup(a, org);
        const [method, path, body] = await build(g);
        const before = await a.call("GET", `/v1/quotes/${g.quoteId}`, org);
        const res = await a.send(method, path, org, body);
        if (res.status === 200 || res.status === 201) {
          // Accepted: the totals must be stored and reported, not wrapped or truncated.
          await res.body?.cancel();
          const quote = await a.call("GET", `/v1/quotes/${g.quoteId}`, org);
          const subtotal = quote.subtotalExGst as number;
          assert(Math.abs(subtotal) >= 1e13, `a huge subtotal is reported: ${subtotal}`);
          assertEquals(
            quote.totalIncGst,
            Math.round((subtotal + (quote.gstAmount as number)) * 100) / 100,
          );
        } else {
          // Refused: a 400 naming what is too large, and the quote is as it was.
          await expectError(res, 400, "validation_error");
          const after = await a.call("GET", `/v1/quotes/${g.quoteId}`, org);
          assertEquals(
            [after.subtotalExGst, after.totalIncGst],
            [before.subtotalExGst, before.totalIncGst],
          );
        }
      });
    }
    await t.step("a tax rate change that takes the total past what can be stored", async () => {
      const g = await freshGroup(a, org);
      await a.call("POST", `/v1/quote-groups/${g.groupId}/lines`, org, {
        ...service,
        quantity: 90_000,
        unitPriceExGst: MAX_AMOUNT,
      });
      const rate = await a.call("POST", "/v1/tax-rates", org, { name: "All", ratePct: 100 });
      const res = await a.send("PATCH", `/v1/quotes/${g.quoteId}`, org, { taxRateId: rate.id });
      if (res.status === 200) {
        const quote = (await res.json() as Json).data as Json;
        assertEquals([quote.subtotalExGst, quote.totalIncGst], [9e13, 1.8e14]);
      } else {
        await expectError(res, 400, "validation_error");
      }
    });
  } finally {
    await a.h.close();
  }
});
