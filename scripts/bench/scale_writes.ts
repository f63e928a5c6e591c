/**
 * The scale bench's writes, each through the gateway: create, PATCH and delete of each resource
 * (the rows a size's creates made are the ones its PATCHes change and its deletes remove, so the
 * tables keep their size), a variant PATCH that re-prices a seeded full quote, a stock
 * adjustment on the variant with the long ledger, a bulk tier change over 10,000 customers, and
 * one event fanned out to 100 webhook subscriptions, timed from the write to the 100th delivery
 * at a local receiver. After every write operation the outboxes are let drain and the event
 * consumers catch up (`settle`), so no operation is timed while the last one's events are still
 * being published.
 */
import type { Sql } from "@printshop/shared/db";
import type { Receiver } from "./receiver.ts";
import {
  dataOf,
  type OperationPlan,
  type Sampler,
  type SizeContext,
  timedCall,
} from "./scale_ops.ts";

const SETTLE_TIMEOUT_MS = 180_000;
const FANOUT_TIMEOUT_MS = 60_000;
/** Subscriptions the fanned-out event goes to. */
export const FANOUT_SUBSCRIPTIONS = 100;
/** Schemas whose outbox the relays publish from. */
const OUTBOX_SCHEMAS = ["quotes", "crm", "catalogue", "proofs", "webhooks", "gateway"] as const;

/**
 * Waits until nothing is left to publish, every consumer group has read its topic to the end and
 * no webhook delivery is pending; answers the seconds it took. Past the timeout it says so and
 * goes on (a delivery retrying with backoff should not stop the run).
 */
export async function settle(sql: Sql, timeoutMs = SETTLE_TIMEOUT_MS): Promise<number> {
  const started = performance.now();
  try {
    return await settleUntil(sql, started, timeoutMs);
  } finally {
    settled.seconds += (performance.now() - started) / 1000;
  }
}

/** Seconds spent settling so far (untimed waits between operations), for the report. */
export const settled = { seconds: 0 };

async function settleUntil(sql: Sql, started: number, timeoutMs: number): Promise<number> {
  const outboxes = OUTBOX_SCHEMAS.map((s) =>
    `(SELECT count(*) FROM ${s}.outbox WHERE published_at IS NULL AND quarantined_at IS NULL)`
  ).join(" + ");
  for (;;) {
    const [row] = await sql.unsafe<{ pending: number }[]>(`
      SELECT (${outboxes}
        + (SELECT count(*) FROM eventbus.consumer_offsets o WHERE o.position <
            (SELECT coalesce(max(seq), 0) FROM eventbus.messages m WHERE m.topic = o.topic))
        + (SELECT count(*) FROM webhooks.deliveries WHERE status IN ('pending', 'retrying'))
      )::int AS pending`);
    if (row!.pending === 0) return (performance.now() - started) / 1000;
    if (performance.now() - started > timeoutMs) {
      console.error(`[scale] still ${row!.pending} events or deliveries pending; going on`);
      return (performance.now() - started) / 1000;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A sampler that settles the stack once its samples are done. */
function settling(sampler: Sampler, sql: Sql): Sampler {
  return {
    ...sampler,
    finish: async () => {
      await sampler.finish?.();
      await settle(sql);
    },
  };
}

/** What a write operation needs beyond the size's context. */
export interface WriteSetup {
  sql: Sql;
  receiver: Receiver;
  /** A seeded catalogue item new variants are made under. */
  catalogueItemId: string;
  /** A seeded quote, the owner of new proofs, and one of its `group` variants, re-banded. */
  quoteId: string;
  groupVariant: { id: string; quantity: number };
  /** The variant with the long ledger. */
  longVariantId: string;
  /** Seeded vendors, one unarchived per fanned-out event. */
  vendorIds: readonly string[];
}

interface WriteResource {
  /** The list whose rows the writes are counted against. */
  listPath: string;
  /** The path of one row, `{…Id}` in it. */
  rowPath: string;
  create: (i: number, tag: string, setup: WriteSetup) => unknown;
  patch: (i: number, tag: string, setup: WriteSetup) => unknown;
  /** Vendors are archived, not deleted: the contract has no DELETE for them. */
  remove: { method: "DELETE" | "POST"; suffix: string };
}

const DELETE = { method: "DELETE", suffix: "" } as const;

/** The resources written, at least those the issue names, in the order they are measured. */
const RESOURCES: readonly WriteResource[] = [
  {
    listPath: "/v1/quotes",
    rowPath: "/v1/quotes/{quoteId}",
    create: (i, tag) => ({ reference: `Scale ${tag} ${i}`, salesRepEmail: "rep1@bench.test" }),
    patch: (i, tag) => ({ notes: `Patched by the scale bench ${tag} ${i}` }),
    remove: DELETE,
  },
  {
    listPath: "/v1/customers",
    rowPath: "/v1/customers/{customerId}",
    create: (i, tag) => ({
      companyName: `Scale API Customer ${tag} ${i}`,
      email: `api${i}.${tag}@customer.scale.test`,
      tier: "bronze",
      tags: ["scale", "api"],
    }),
    patch: (i, tag) => ({ notes: `Patched by the scale bench ${tag} ${i}` }),
    remove: DELETE,
  },
  {
    listPath: "/v1/vendors",
    rowPath: "/v1/vendors/{vendorId}",
    create: (i, tag) => ({
      name: `Scale API Vendor ${tag} ${i}`,
      kind: "Decorator",
      serviceTypes: ["ScreenPrint"],
    }),
    patch: (i) => ({ defaultLeadTimeDays: 1 + (i % 20) }),
    remove: { method: "POST", suffix: "/archive" },
  },
  {
    listPath: "/v1/catalogue",
    rowPath: "/v1/catalogue/{catalogueItemId}",
    create: (i, tag) => ({
      styleCode: `SCALE-${tag}-${i}`,
      name: `Scale API item ${tag} ${i}`,
      brand: "Bench",
    }),
    patch: (i, tag) => ({ name: `Scale API item ${tag} ${i} (patched)` }),
    remove: DELETE,
  },
  {
    listPath: "/v1/garment-variants",
    rowPath: "/v1/garment-variants/{garmentVariantId}",
    create: (i, tag, setup) => ({
      garmentCatalogueItemId: setup.catalogueItemId,
      color: `Scale ${tag} ${i}`,
      size: "M",
    }),
    patch: (i, tag) => ({ stockCode: `SCALE-${tag}-${i}` }),
    remove: DELETE,
  },
  {
    listPath: "/v1/tasks",
    rowPath: "/v1/tasks/{taskId}",
    create: (i, tag) => ({ title: `Scale API task ${tag} ${i}`, priority: "normal" }),
    patch: (i) => ({ status: i % 2 === 0 ? "in_progress" : "done" }),
    remove: DELETE,
  },
  {
    listPath: "/v1/proofs",
    rowPath: "/v1/proofs/{proofId}",
    create: (i, tag, setup) => ({
      quoteId: setup.quoteId,
      title: `Scale API proof ${tag} ${i}`,
      recipientName: "Sam Scale",
      recipientEmail: "sam@client.scale.test",
      imageUrls: [`https://files.scale.test/proofs/api-${tag}-${i}.png`],
    }),
    patch: (i) => ({ recipientName: `Sam Scale ${i}` }),
    remove: DELETE,
  },
  {
    listPath: "/v1/webhooks",
    rowPath: "/v1/webhooks/{webhookId}",
    // An event the bench never fires, so these subscriptions never deliver.
    create: (i, tag, setup) => ({
      url: `${setup.receiver.url}/writes/${tag}/${i}`,
      event: "proof.viewed",
    }),
    patch: (i, tag, setup) => ({ url: `${setup.receiver.url}/writes/${tag}/${i}/v2` }),
    remove: DELETE,
  },
];

/** The create, PATCH and delete plans of every resource, then the other writes. */
export function writePlans(setup: WriteSetup): OperationPlan[] {
  const plans: OperationPlan[] = [];
  for (const resource of RESOURCES) {
    // The rows this size's creates made, for its PATCHes and deletes.
    const made: string[] = [];
    const tagOf = (c: SizeContext): string => `x${c.size.multiple}`;
    const rowUrl = (c: SizeContext, id: string): string =>
      `${c.gatewayUrl}${resource.rowPath.replace(/\{\w+\}/, id)}`;
    const rows = (c: SizeContext): number => c.totals.get(resource.listPath) ?? NaN;
    plans.push({
      name: `POST ${resource.listPath}`,
      kind: "write",
      prepare: (c) => {
        made.length = 0;
        return Promise.resolve(settling({
          rows: rows(c),
          warmup: c.warmup,
          samples: c.samples,
          sample: async (i) => {
            const { ms, text } = await timedCall(`${c.gatewayUrl}${resource.listPath}`, {
              method: "POST",
              headers: c.headers,
              body: resource.create(i, tagOf(c), setup),
            }, [200, 201]);
            made.push(dataOf<{ id: string }>(text).id);
            return ms;
          },
        }, setup.sql));
      },
    });
    plans.push({
      name: `PATCH ${resource.rowPath}`,
      kind: "write",
      prepare: (c) => {
        if (made.length < c.warmup + c.samples) {
          throw new Error(`only ${made.length} rows were created to PATCH`);
        }
        return Promise.resolve(settling({
          rows: rows(c),
          warmup: c.warmup,
          samples: c.samples,
          sample: async (i) =>
            (await timedCall(rowUrl(c, made[i]!), {
              method: "PATCH",
              headers: c.headers,
              body: resource.patch(i, tagOf(c), setup),
            })).ms,
        }, setup.sql));
      },
    });
    plans.push({
      name: `${resource.remove.method} ${resource.rowPath}${resource.remove.suffix}`,
      kind: "write",
      prepare: (c) => {
        if (made.length < c.warmup + c.samples) {
          throw new Error(`only ${made.length} rows were created to delete`);
        }
        return Promise.resolve(settling({
          rows: rows(c),
          warmup: c.warmup,
          samples: c.samples,
          sample: async (i) =>
            (await timedCall(`${rowUrl(c, made[i]!)}${resource.remove.suffix}`, {
              method: resource.remove.method,
              headers: c.headers,
            }, [200, 204])).ms,
        }, setup.sql));
      },
    });
  }

  // Re-banding one variant re-prices its line and the whole 60-variant quote.
  let reband = 0;
  plans.push({
    name: "PATCH /v1/quote-variants/{variantId} (re-bands a seeded full quote)",
    kind: "write",
    prepare: (c) =>
      Promise.resolve(settling({
        rows: c.totals.get("/v1/quotes") ?? NaN,
        warmup: c.warmup,
        samples: c.samples,
        sample: async () => {
          // +30 moves the line's quantity across a band and back (bench_quotes.ts's bands).
          const quantity = setup.groupVariant.quantity + (reband++ % 2 === 0 ? 30 : 0);
          return (await timedCall(`${c.gatewayUrl}/v1/quote-variants/${setup.groupVariant.id}`, {
            method: "PATCH",
            headers: c.headers,
            body: { quantity },
          })).ms;
        },
      }, setup.sql)),
  });

  plans.push({
    name: "POST /v1/garment-variants/{long-ledger variant}/stock-adjustments",
    kind: "write",
    prepare: (c) =>
      Promise.resolve(settling({
        rows: c.totals.get("/v1/garment-variants/{garmentVariantId}/stock-adjustments") ?? NaN,
        warmup: c.warmup,
        samples: c.samples,
        sample: async () =>
          (await timedCall(
            `${c.gatewayUrl}/v1/garment-variants/${setup.longVariantId}/stock-adjustments`,
            { method: "POST", headers: c.headers, body: { delta: 1, reason: "received" } },
            [200, 201],
          )).ms,
      }, setup.sql)),
  });
  return plans;
}

/** The tier the bulk change's block of customers is at now; it flips with every call. */
export interface TierState {
  tier: "silver" | "wholesale";
}

/**
 * `POST /v1/customers/bulk/tier` over the block of 10,000 customers (by a tier filter that only
 * they match), flipping them silver ↔ wholesale; each call must change every one of them. The
 * stack settles after each call, untimed (10,000 events to publish and consume).
 */
export function bulkTierPlan(
  sql: Sql,
  state: TierState,
  rounds: { warmup: number; samples: number },
): OperationPlan {
  return {
    name: "POST /v1/customers/bulk/tier (10,000 customers by a tier filter)",
    kind: "bulk",
    prepare: (c) => {
      const block = c.size.tierBlock;
      return Promise.resolve({
        rows: c.totals.get("/v1/customers") ?? NaN,
        warmup: rounds.warmup,
        samples: rounds.samples,
        note: `${block} customers a call`,
        sample: async () => {
          const next = state.tier === "silver" ? "wholesale" : "silver";
          const { ms, text } = await timedCall(`${c.gatewayUrl}/v1/customers/bulk/tier`, {
            method: "POST",
            headers: c.headers,
            body: {
              target: { filters: [{ field: "tier", op: "eq", value: state.tier }] },
              tier: next,
            },
          });
          const answer = dataOf<{ requested: number; affected: number }>(text);
          if (answer.requested !== block || answer.affected !== block) {
            throw new Error(
              `bulk tier ${state.tier} → ${next} changed ${answer.affected} of ` +
                `${answer.requested} customers, not ${block}`,
            );
          }
          state.tier = next;
          await settle(sql);
          return ms;
        },
      });
    },
  };
}

/**
 * One `vendor.unarchived` event to FANOUT_SUBSCRIPTIONS subscriptions of the shop, one receiver
 * path each, signatures verified as a customer's endpoint would. No other operation fires that
 * event, so the subscriptions are made once, at the first size, and kept. A sample unarchives a
 * seeded vendor (archived first, untimed, and the stack settled), timed from the request to the
 * last of its deliveries to arrive.
 */
export function fanoutPlan(
  setup: WriteSetup,
  rounds: { warmup: number; samples: number },
): OperationPlan {
  const paths: string[] = [];
  return {
    name: `vendor.unarchived → ${FANOUT_SUBSCRIPTIONS} webhook deliveries ` +
      "(POST /v1/vendors/{vendorId}/unarchive to the last arrival)",
    kind: "fanout",
    prepare: async (c) => {
      for (let s = paths.length; s < FANOUT_SUBSCRIPTIONS; s++) {
        const path = `/fanout/${s}`;
        const made = dataOf<{ secret: string }>(
          (await timedCall(`${c.gatewayUrl}/v1/webhooks`, {
            method: "POST",
            headers: c.headers,
            body: { url: `${setup.receiver.url}${path}`, event: "vendor.unarchived" },
          }, [200, 201])).text,
        );
        setup.receiver.verifyWith(path, made.secret);
        paths.push(path);
      }
      return {
        rows: c.totals.get("/v1/webhooks/{webhookId}/deliveries") ?? NaN,
        warmup: rounds.warmup,
        samples: rounds.samples,
        note: `${FANOUT_SUBSCRIPTIONS} subscriptions`,
        sample: async (i) => {
          const vendorId = setup.vendorIds[i % setup.vendorIds.length]!;
          const vendorUrl = `${c.gatewayUrl}/v1/vendors/${vendorId}`;
          await timedCall(`${vendorUrl}/archive`, { method: "POST", headers: c.headers }, [
            200,
            409,
          ]);
          await settle(setup.sql);
          const started = Date.now();
          await timedCall(`${vendorUrl}/unarchive`, { method: "POST", headers: c.headers });
          for (;;) {
            const arrivals = paths.map((path) =>
              [...setup.receiver.arrivals(path).values()].find((a) =>
                a.dataId === vendorId && a.receivedAt >= started
              )
            );
            if (arrivals.every((a) => a !== undefined)) {
              return Math.max(...arrivals.map((a) => a!.receivedAt)) - started;
            }
            if (Date.now() - started > FANOUT_TIMEOUT_MS) {
              const missing = arrivals.filter((a) => a === undefined).length;
              throw new Error(`${missing} of ${FANOUT_SUBSCRIPTIONS} deliveries never arrived`);
            }
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        },
        finish: async () => void await settle(setup.sql),
      };
    },
  };
}
