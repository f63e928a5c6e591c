/**
 * The webhook receiver of the benches: one loopback listener, one path per subscription, the
 * first arrival of each event id recorded (receipt time, the event's occurredAt, its `data.id`).
 * Each delivery's Standard Webhooks signature is verified with its subscription's secret, as a
 * customer's endpoint would. Used by the events part and the ratios part's events under load.
 */
import { Webhook } from "standardwebhooks";

export interface Arrival {
  receivedAt: number;
  occurredAt: number;
  /** The payload's `data.id`: the row the event is about (a created quote's id). */
  dataId: string | null;
}

export interface Receiver {
  url: string;
  arrivals(path: string): Map<string, Arrival>;
  duplicates(path: string): number;
  /** Every arrival of an event id already seen at `path`, with when it came. */
  repeats(path: string): { id: string; receivedAt: number }[];
  /**
   * From now on, a delivery to `path` must carry a Standard Webhooks signature by `secret` (the
   * `whsec_…` its subscription answered), verified as a customer's endpoint would; one that does
   * not is answered 401 and counted in `refused`, not in `arrivals`.
   */
  verifyWith(path: string, secret: string): void;
  /** Deliveries to `path` whose signature did not verify. */
  refused(path: string): number;
  /** Until `until` (Date.now() time), every delivery is answered 503 and not recorded. */
  unavailableUntil(until: number): void;
  /** Every path that received a delivery, with how many distinct event ids. */
  paths(): Map<string, number>;
  stop(): Promise<void>;
}

export function startReceiver(): Receiver {
  const byPath = new Map<string, Map<string, Arrival>>();
  const dupes = new Map<string, number>();
  const again = new Map<string, { id: string; receivedAt: number }[]>();
  const refusals = new Map<string, number>();
  const verifiers = new Map<string, Webhook>();
  let downUntil = 0;
  const arrivals = (path: string): Map<string, Arrival> => {
    let map = byPath.get(path);
    if (!map) byPath.set(path, map = new Map());
    return map;
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const receivedAt = Date.now();
    if (receivedAt < downUntil) {
      await req.body?.cancel();
      return new Response(null, { status: 503 });
    }
    const id = req.headers.get("webhook-id");
    const path = new URL(req.url).pathname;
    try {
      const text = await req.text();
      const verifier = verifiers.get(path);
      if (verifier) {
        try {
          verifier.verify(text, Object.fromEntries(req.headers));
        } catch {
          refusals.set(path, (refusals.get(path) ?? 0) + 1);
          return new Response(null, { status: 401 });
        }
      }
      const body = JSON.parse(text) as { timestamp?: string; data?: { id?: unknown } };
      const occurredAt = Date.parse(body.timestamp ?? "");
      if (id === null || Number.isNaN(occurredAt)) return new Response(null, { status: 400 });
      const seen = arrivals(path);
      if (seen.has(id)) {
        dupes.set(path, (dupes.get(path) ?? 0) + 1);
        again.set(path, [...(again.get(path) ?? []), { id, receivedAt }]);
      } else {
        const dataId = typeof body.data?.id === "string" ? body.data.id : null;
        seen.set(id, { receivedAt, occurredAt, dataId });
      }
      return new Response(null, { status: 204 });
    } catch {
      return new Response(null, { status: 400 });
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    arrivals,
    duplicates: (path) => dupes.get(path) ?? 0,
    repeats: (path) => again.get(path) ?? [],
    verifyWith: (path, secret) => void verifiers.set(path, new Webhook(secret)),
    refused: (path) => refusals.get(path) ?? 0,
    unavailableUntil: (until) => void (downUntil = until),
    paths: () => new Map([...byPath].map(([path, seen]) => [path, seen.size])),
    stop: () => server.shutdown(),
  };
}
