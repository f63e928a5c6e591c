/**
 * Every change announces itself: a variant write that moves its line's quantity into another
 * band re-prices the line's other `group` variants, and each of them gets its own
 * `quote_variant.updated`, carrying the price it now has.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { okAs, serviceHarness } from "@printshop/shared/testing";
import { quotesService } from "./app.ts";

type Json = Record<string, unknown>;

Deno.test("a variant write that re-bands its siblings announces each of them as updated", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const call = (method: string, path: string, body?: unknown): Promise<Json> =>
    okAs<Json>(h, method, path, org, body);
  const group = await call("POST", "/v1/markup-groups", {
    name: "Tees",
    lane: "garment",
    bands: [
      { from: 1, markupType: "percentage", markupValue: 50 },
      { from: 10, markupType: "percentage", markupValue: 20 },
    ],
  });
  const quote = await call("POST", "/v1/quotes", { reference: "Bands" });
  const quoteGroup = await call("POST", `/v1/quotes/${quote.id}/groups`, { name: "G" });
  const line = await call("POST", `/v1/quote-groups/${quoteGroup.id}/lines`, {
    lineType: "Garment",
    productName: "Tee",
  });
  const grouped = (quantity: number) => ({
    size: "M",
    quantity,
    buyPrice: 10,
    markupSource: "group",
    markupGroupId: group.id,
  });
  const first = await call("POST", `/v1/quote-lines/${line.id}/variants`, grouped(5));
  assertEquals(first.unitPriceExGst, 15);

  /** The `quote_variant.updated` payloads written for `id` since outbox row `after`. */
  const updates = async (id: unknown, after: string): Promise<Json[]> =>
    (await h.sql<{ payload: Json }[]>`
      SELECT payload FROM outbox
      WHERE type = 'quote_variant.updated' AND aggregate_id = ${id as string} AND id > ${after}
      ORDER BY id`).map((r) => r.payload);
  const mark = async (): Promise<string> =>
    (await h.sql<{ id: string }[]>`
      SELECT coalesce(max(id::text), '00000000-0000-0000-0000-000000000000') AS id
      FROM outbox`)[0]!.id;
  /** The variant as the quote now shows it. */
  const shown = async (id: unknown): Promise<Json | undefined> => {
    const groups = (await call("GET", `/v1/quotes/${quote.id}`)).groups as Json[];
    const lines = groups.flatMap((g) => g.lines as Json[]);
    return lines.flatMap((l) => l.variants as Json[]).find((v) => v.id === id);
  };

  // A second variant takes the line to 11: the first moves to the 20 % band.
  let before = await mark();
  const second = await call("POST", `/v1/quote-lines/${line.id}/variants`, grouped(6));
  assertEquals(second.unitPriceExGst, 12);
  const [moved, ...more] = await updates(first.id, before);
  assertEquals(more, []);
  assertEquals([moved?.id, moved?.unitPriceExGst, moved?.markupValue], [first.id, 12, 20]);
  assertEquals(await shown(first.id), moved, "the event carries the variant as it now is");

  // Deleting it takes the line back to 5: the first goes back to 50 %.
  before = await mark();
  await call("DELETE", `/v1/quote-variants/${second.id}`);
  const [back, ...again] = await updates(first.id, before);
  assertEquals(again, []);
  assertEquals([back?.unitPriceExGst, back?.markupValue], [15, 50]);

  // A change that moves no sibling's price announces the changed variant alone.
  before = await mark();
  const third = await call("POST", `/v1/quote-lines/${line.id}/variants`, grouped(1));
  assertEquals(await updates(first.id, before), []);
  assertEquals(await updates(third.id, before), []);
  // The variant written is announced once, by its own event, whatever the re-banding did.
  before = await mark();
  await call("PATCH", `/v1/quote-variants/${third.id}`, { quantity: 20 });
  assertEquals((await updates(third.id, before)).length, 1);
  assertEquals((await updates(first.id, before)).map((p) => p.unitPriceExGst), [12]);
});
