import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { deliveryBody, withoutCosts } from "./payload.ts";

Deno.test("withoutCosts() removes cost fields at every depth and keeps the rest", () => {
  const quote = {
    id: "q",
    total: 10,
    groups: [{
      setupCost: 5,
      lines: [{ unitCost: 1, variants: [{ buyPrice: 2, extraCost: 3, quantity: 4 }] }],
    }],
  };
  assertEquals(withoutCosts(quote), {
    id: "q",
    total: 10,
    groups: [{ lines: [{ variants: [{ quantity: 4 }] }] }],
  });
  assertEquals(quote.groups[0]!.setupCost, 5, "the input is not changed");
  assertEquals(withoutCosts(null), null);
  assertEquals(withoutCosts([1, "a"]), [1, "a"]);
});

Deno.test("deliveryBody() is { type, timestamp, data } and honours the costs flag", () => {
  const event = {
    type: "quote_variant.updated",
    occurredAt: "2026-11-21T09:30:00.000Z",
    data: {
      id: "v",
      buyPrice: 2,
    },
  };
  assertEquals(JSON.parse(deliveryBody(event, true)), {
    type: "quote_variant.updated",
    timestamp: "2026-11-21T09:30:00.000Z",
    data: { id: "v", buyPrice: 2 },
  });
  assertEquals(JSON.parse(deliveryBody(event, false)).data, { id: "v" });
});
