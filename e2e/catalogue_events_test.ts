/**
 * The catalogue service's events, as the contracts declare them, are the truth about what it
 * emits: every declared name comes out of some operation, and nothing else comes out.
 * Operations run through the real gateway; what they emitted is read back from the outbox.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { declaredBy, emittedBy, startTestStack, type TestStack } from "@printshop/shared/testing";
import { connect } from "@printshop/shared/db";

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

  // Nothing has been emitted before the first catalogue operation.
  assertEquals(await emittedBy(stack, "catalogue"), []);

  const item = await send("POST", "/v1/catalogue", { styleCode: "5000", name: "Tee" });
  await send("PATCH", `/v1/catalogue/${item.id}`, { name: "Heavy tee" });
  const [black, white] = await send("POST", "/v1/garment-variants/bulk/create", {
    input: [
      { garmentCatalogueItemId: item.id, color: "Black", size: "M", stockOnHand: 5 },
      { garmentCatalogueItemId: item.id, color: "White", size: "M" },
    ],
  }) as unknown as Json[];
  await send("PATCH", `/v1/garment-variants/${black!.id}`, { stockCode: "G500-BLK-M" });
  // Neither variant was given a style code: the item's new one reaches both, each announced.
  await send("PATCH", `/v1/catalogue/${item.id}`, { styleCode: "G5000" });
  await send("POST", `/v1/garment-variants/${black!.id}/stock-adjustments`, {
    delta: 3,
    reason: "received",
  });
  await send("DELETE", `/v1/garment-variants/${white!.id}`);
  await send("PATCH", "/v1/catalogue-settings", { allowNegativeStock: true });
  const polo = await send("POST", "/v1/prebuilt-items", { name: "Staff polo" });
  await send("PUT", `/v1/prebuilt-items/${polo.id}`, { name: "Staff polo, navy" });
  const chosen = crypto.randomUUID();
  await send("PUT", `/v1/prebuilt-items/${chosen}`, { name: "Hi-vis tee" });
  await send("POST", "/v1/prebuilt-items/bulk/status", {
    target: { ids: [polo.id] },
    status: "active",
  });
  await send("POST", "/v1/prebuilt-items/bulk/delete", { target: { ids: [polo.id] } });
  await send("DELETE", `/v1/prebuilt-items/${chosen}`);
  // The cascade deletes the remaining variant with the item.
  await send("DELETE", `/v1/catalogue/${item.id}?cascade=true`);

  assertEquals(await emittedBy(stack, "catalogue"), declaredBy("catalogue"));

  // The names above are distinct types; the cascade's own deletion event is checked by row.
  const sql = connect(stack.db.url, { schema: "catalogue", max: 1 });
  try {
    const deleted = await sql<{ aggregate_id: string }[]>`
      SELECT aggregate_id FROM outbox WHERE type = 'garment_variant.deleted' ORDER BY aggregate_id`;
    assertEquals(deleted.map((r) => r.aggregate_id), [black!.id, white!.id].sort());
    const followed = await sql<{ aggregate_id: string }[]>`
      SELECT aggregate_id FROM outbox
      WHERE type = 'garment_variant.updated' AND payload->>'styleCode' = 'G5000'
      ORDER BY aggregate_id`;
    assertEquals(followed.map((r) => r.aggregate_id), [black!.id, white!.id].sort());
  } finally {
    await sql.end();
  }
});
