import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { openLoop } from "./bench/load.ts";
import { startReceiver } from "./bench/receiver.ts";

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
function secret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

async function deliver(
  url: string,
  signWith: string,
  id: string,
  body: unknown,
): Promise<number> {
  const text = JSON.stringify(body);
  const timestamp = new Date();
  const signature = new Webhook(signWith).sign(id, timestamp, text);
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": signature,
    },
    body: text,
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("the receiver takes a delivery signed with its path's secret and refuses another", async () => {
  const receiver = startReceiver();
  try {
    const good = secret();
    receiver.verifyWith("/events/quote.created", good);
    const body = {
      type: "quote.created",
      timestamp: "2026-11-25T10:00:00.000Z",
      data: { id: "q1" },
    };
    const url = `${receiver.url}/events/quote.created`;
    assertEquals(await deliver(url, good, "evt_1", body), 204);
    assertEquals(await deliver(url, good, "evt_1", body), 204);
    assertEquals(await deliver(url, secret(), "evt_2", body), 401);
    const arrivals = receiver.arrivals("/events/quote.created");
    assertEquals([...arrivals.keys()], ["evt_1"]);
    assertEquals(arrivals.get("evt_1")!.occurredAt, Date.parse(body.timestamp));
    assertEquals(arrivals.get("evt_1")!.dataId, "q1");
    assertEquals(receiver.duplicates("/events/quote.created"), 1);
    assertEquals(receiver.refused("/events/quote.created"), 1);
    // A path with no secret registered takes any delivery (the events part before it verified).
    assertEquals(await deliver(`${receiver.url}/other`, secret(), "evt_3", body), 204);
    assertEquals([...receiver.paths()], [["/events/quote.created", 1], ["/other", 1]]);
  } finally {
    await receiver.stop();
  }
});

Deno.test("openLoop sends every call in order and holds back past maxInFlight", async () => {
  let inFlight = 0;
  let most = 0;
  const started: number[] = [];
  const driven = await openLoop(
    20,
    100_000, // far faster than the calls answer, so only maxInFlight paces them
    async (i) => {
      started.push(i);
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      return i * 2;
    },
    { maxInFlight: 3 },
  );
  assertEquals(driven.results, Array.from({ length: 20 }, (_, i) => i * 2));
  assertEquals(started, Array.from({ length: 20 }, (_, i) => i));
  assert(most <= 3, `${most} calls were unanswered at once`);
});
