/**
 * One transport's run of the events part, and what its phases share: the organisations
 * ("shops"), each with one subscription to its own path of the receiver; the changes they make
 * through the gateway (a quote created, or a seeded quote deleted); and the wait until every
 * event the quotes outbox holds for a shop has arrived.
 */
import type { Sql } from "@printshop/shared/db";
import type { RunningStack } from "@printshop/shared/launcher";
import { sleep } from "@printshop/shared/net";
import type { Completeness, EventType, Transport } from "./events_report.ts";
import type { Receiver } from "./receiver.ts";
import { api, benchOrganization } from "./stack.ts";

/** Waiting for deliveries gives up when none has arrived for this long. */
const STALL_MS = 20_000;

export interface Run {
  transport: Transport;
  stack: RunningStack;
  adminToken: string;
  receiver: Receiver;
  sql: Sql;
  logDir: string;
  /** The stack's processes by pid, for the CPU figures. */
  names: Map<number, string>;
  signal: AbortSignal;
  /** Throws if a process of the stack died or the run was interrupted. */
  check(): void;
}

export interface Shop {
  organizationId: string;
  apiKey: string;
  event: EventType;
  /** The receiver path its subscription points at. */
  path: string;
  /** Quotes to delete, for the quote.deleted workload. */
  quoteIds: string[];
}

/** An organisation with an all-scopes key, no practical rate limit, and one subscription. */
export async function shop(
  run: Run,
  name: string,
  event: EventType,
  path: string,
): Promise<Shop> {
  const { organizationId, apiKey } = await benchOrganization(
    { adminUrl: run.stack.adminUrl, adminToken: run.adminToken },
    name,
  );
  const subscription = await api<{ secret: string }>(`${run.stack.gatewayUrl}/v1/webhooks`, {
    method: "POST",
    headers: { "x-api-key": apiKey },
    body: { url: `${run.receiver.url}${path}`, event },
  });
  run.receiver.verifyWith(path, subscription.secret);
  return { organizationId, apiKey, event, path, quoteIds: [] };
}

/** Empty draft quotes straight into the quotes schema: no outbox rows, so no events. */
export async function seedQuotes(run: Run, s: Shop, count: number): Promise<void> {
  const rows = await run.sql<{ id: string }[]>`
    INSERT INTO quotes.quotes (id, organization_id, quote_number, quote_ref, reference)
    SELECT gen_random_uuid(), ${s.organizationId}, n, 'Q-' || lpad(n::text, 5, '0'),
      'Events bench (seeded)'
    FROM generate_series(1, ${count}::int) AS n
    RETURNING id`;
  await run.sql`
    INSERT INTO quotes.quote_ref_counters (organization_id, last_number)
    VALUES (${s.organizationId}, ${count})`;
  s.quoteIds = rows.map((r) => r.id);
}

export interface Write {
  ok: boolean;
  responseMs: number;
}

/** The i-th change of the shop's workload, through the gateway. */
export async function change(run: Run, s: Shop, i: number): Promise<Write> {
  const started = performance.now();
  const headers = { "x-api-key": s.apiKey, "content-type": "application/json" };
  try {
    const res = s.event === "quote.created"
      ? await fetch(`${run.stack.gatewayUrl}/v1/quotes`, {
        method: "POST",
        headers,
        body: JSON.stringify({ reference: `Events bench ${i}` }),
        signal: run.signal,
      })
      : await fetch(`${run.stack.gatewayUrl}/v1/quotes/${s.quoteIds[i]}`, {
        method: "DELETE",
        headers,
        signal: run.signal,
      });
    await res.arrayBuffer();
    return { ok: res.ok, responseMs: performance.now() - started };
  } catch {
    // Never rejects: an interrupted run stops at its next check, and a rejection nobody awaits
    // yet (the open loop's requests in flight) would end the process before the teardown.
    return { ok: false, responseMs: performance.now() - started };
  }
}

/**
 * Waits until every event of the shop's type in the quotes outbox has arrived, or none has for
 * `stallMs` (or `capMs` passed); returns how complete the phase is, and the expected ids.
 */
export async function awaitDeliveries(
  run: Run,
  s: Shop,
  options: { capMs: number; stallMs?: number },
): Promise<Completeness & { ids: string[] }> {
  // Read through to_jsonb so the query works with or without the quarantine column.
  const rows = await run.sql<{ id: string; quarantined: boolean }[]>`
    SELECT o.id, (to_jsonb(o) ->> 'quarantined_at') IS NOT NULL AS quarantined
    FROM quotes.outbox o WHERE o.organization_id = ${s.organizationId} AND o.type = ${s.event}`;
  const ids = rows.map((r) => r.id);
  const arrived = run.receiver.arrivals(s.path);
  const deadline = Date.now() + options.capMs;
  const stallMs = options.stallMs ?? STALL_MS;
  let seen = -1;
  let progressAt = Date.now();
  const missing = (): number => ids.filter((id) => !arrived.has(id)).length;
  while (missing() > 0 && Date.now() < deadline && Date.now() - progressAt < stallMs) {
    run.check();
    if (arrived.size !== seen) {
      seen = arrived.size;
      progressAt = Date.now();
    }
    await sleep(20);
  }
  const left = missing();
  return {
    ids,
    expected: ids.length,
    delivered: ids.length - left,
    quarantined: rows.filter((r) => r.quarantined).length,
    allArrived: left === 0 && ids.length > 0,
    missing: left,
    duplicates: run.receiver.duplicates(s.path),
    refused: run.receiver.refused(s.path),
  };
}
