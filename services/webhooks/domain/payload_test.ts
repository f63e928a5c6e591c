import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { deliveryBody } from "./payload.ts";

Deno.test("deliveryBody() is { type, timestamp, data } and leaves costs and margins out without costs.read", () => {
  const event = {
    type: "quote_variant.updated",
    occurredAt: "2026-11-21T09:30:00.000Z",
    data: {
      id: "v",
      buyPrice: 2,
      markupValue: 33,
    },
  };
  assertEquals(JSON.parse(deliveryBody(event, true)), {
    type: "quote_variant.updated",
    timestamp: "2026-11-21T09:30:00.000Z",
    data: { id: "v", buyPrice: 2, markupValue: 33 },
  });
  assertEquals(JSON.parse(deliveryBody(event, false)).data, { id: "v" });
});
