/**
 * The simulation's shop and its writes: an organisation with a key, a webhook subscription for
 * every public event type (a receiver path each, its signature verified), then writes across
 * quotes, catalogue, CRM and proofs (each proof sent, so a mail goes out) through the gateway's
 * front. Each write carries an Idempotency-Key and is retried when the platform broke it off or
 * the gateway answered 503, as an integrator's client would. Every answer is checked against the
 * OpenAPI document the gateway serves: a success, or a status that operation documents.
 */
import { ALL_SCOPES } from "@printshop/shared/scopes";
import type { Receiver } from "../bench/receiver.ts";

export interface Shop {
  organizationId: string;
  apiKey: string;
  /** Receiver path of each event type's subscription. */
  paths: Map<string, string>;
}

async function call<T>(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: unknown },
): Promise<T> {
  for (let attempt = 0;; attempt++) {
    const res = await fetch(url, {
      method: init.method,
      headers: { "content-type": "application/json", ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    // Setting up happens while instances start; a broken-off request is tried again.
    if ((res.status === 502 || res.status === 503) && attempt < 10) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    if (!res.ok) throw new Error(`${init.method} ${url} → ${res.status}: ${text}`);
    return (JSON.parse(text) as { data: T }).data;
  }
}

export async function setUpShop(options: {
  gateway: string;
  adminToken: string;
  receiver: Receiver;
  eventTypes: readonly string[];
}): Promise<Shop> {
  const admin = { authorization: `Bearer ${options.adminToken}` };
  const org = await call<{ id: string }>(`${options.gateway}/admin/organizations`, {
    method: "POST",
    headers: admin,
    body: { name: "Simulated Print Shop" },
  });
  await call(`${options.gateway}/admin/organizations/${org.id}/limits`, {
    method: "PUT",
    headers: admin,
    body: { requestsPerMinute: 1_000_000 },
  });
  const key = await call<{ apiKey: string }>(
    `${options.gateway}/admin/organizations/${org.id}/api-keys`,
    { method: "POST", headers: admin, body: { scopes: ALL_SCOPES } },
  );
  const paths = new Map<string, string>();
  for (const event of options.eventTypes) {
    const path = `/hooks/${event}`;
    const subscription = await call<{ secret: string }>(`${options.gateway}/v1/webhooks`, {
      method: "POST",
      headers: { "x-api-key": key.apiKey },
      body: { url: `${options.receiver.url}${path}`, event },
    });
    options.receiver.verifyWith(path, subscription.secret);
    paths.set(event, path);
  }
  return { organizationId: org.id, apiKey: key.apiKey, paths };
}

/** One answer that was neither a success nor documented for its operation. */
export interface Undocumented {
  operation: string;
  status: number;
  body: string;
}

export interface LoadOutcome {
  /** Writes answered with a success. */
  succeeded: number;
  /** Final answers per status, by operation. */
  answers: Map<string, Map<number, number>>;
  undocumented: Undocumented[];
  /** Requests the platform broke off (its own 502: the instance died under them). */
  brokenOff: number;
  /** Writes given up after their retries: counted, not an error of the API. */
  gaveUp: number;
  proofsSent: number;
}

/** The documented statuses of each operation, from the gateway's OpenAPI document. */
async function documentedStatuses(gateway: string): Promise<Map<string, Set<string>>> {
  const res = await fetch(`${gateway}/openapi.json`);
  const document = await res.json() as {
    paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  };
  const statuses = new Map<string, Set<string>>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      statuses.set(
        `${method.toUpperCase()} ${path}`,
        new Set(Object.keys(operation.responses ?? {})),
      );
    }
  }
  return statuses;
}

interface Write {
  operation: string;
  path: string;
  body: unknown;
}

/** The writes, in turn: a quote, a catalogue item, a customer, a proof and its sending. */
function writesOf(index: number): Write[] {
  switch (index % 4) {
    case 0:
      return [{
        operation: "POST /v1/quotes",
        path: "/v1/quotes",
        body: { reference: `Sim ${index}` },
      }];
    case 1:
      return [{
        operation: "POST /v1/catalogue",
        path: "/v1/catalogue",
        body: { styleCode: `S${index}`, name: `Tee ${index}` },
      }];
    case 2:
      return [{
        operation: "POST /v1/customers",
        path: "/v1/customers",
        body: { companyName: `Customer ${index}` },
      }];
    default:
      return [{
        operation: "POST /v1/proofs",
        path: "/v1/proofs",
        body: {
          quoteId: crypto.randomUUID(),
          title: `Proof ${index}`,
          recipientName: "Simulated Customer",
          recipientEmail: `customer-${index}@simulated.example`,
          imageUrls: ["https://files.example.com/front.png"],
          items: [{ description: "Gildan 5000 Black", sizes: [{ size: "M", quantity: 12 }] }],
        },
      }];
  }
}

/** Sends writes until `writes` succeeded, `concurrency` at a time. */
export async function runWrites(options: {
  gateway: string;
  apiKey: string;
  writes: number;
  concurrency: number;
  /** The first write's number: a later run starts past an earlier one's (style codes are unique). */
  firstIndex?: number;
}): Promise<LoadOutcome> {
  const documented = await documentedStatuses(options.gateway);
  const outcome: LoadOutcome = {
    succeeded: 0,
    answers: new Map(),
    undocumented: [],
    brokenOff: 0,
    gaveUp: 0,
    proofsSent: 0,
  };
  const record = (operation: string, status: number, body: string): void => {
    const byStatus = outcome.answers.get(operation) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    outcome.answers.set(operation, byStatus);
    if (status >= 200 && status < 300) return;
    const listed = documented.get(operation);
    if (!listed?.has(String(status))) {
      outcome.undocumented.push({ operation, status, body: body.slice(0, 300) });
    }
  };

  /** One write until it succeeds or is given up; its answer's data, or null. */
  const send = async (write: Write, template: string): Promise<{ id?: string } | null> => {
    const key = crypto.randomUUID();
    for (let attempt = 0; attempt < 8; attempt++) {
      const res = await fetch(`${options.gateway}${write.path}`, {
        method: "POST",
        headers: {
          "x-api-key": options.apiKey,
          "content-type": "application/json",
          "idempotency-key": key,
        },
        body: JSON.stringify(write.body),
      });
      const text = await res.text();
      if (res.headers.get("x-simulated-platform") === "true") {
        outcome.brokenOff++;
      } else {
        record(template, res.status, text);
        if (res.ok) {
          outcome.succeeded++;
          return (JSON.parse(text) as { data: { id?: string } }).data;
        }
        // Retried as a client would: the service or the first request was away, not wrong.
        const retryable = res.status === 503 || res.status === 429 ||
          (res.status === 409 && text.includes("idempotency_request_in_flight"));
        if (!retryable) return null;
      }
      await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
    }
    outcome.gaveUp++;
    return null;
  };

  let next = options.firstIndex ?? 0;
  const worker = async (): Promise<void> => {
    while (outcome.succeeded < options.writes) {
      const index = next++;
      for (const write of writesOf(index)) {
        const created = await send(write, write.operation);
        if (write.operation === "POST /v1/proofs" && created?.id) {
          const sent = await send(
            {
              operation: "POST /v1/proofs/{proofId}/send",
              path: `/v1/proofs/${created.id}/send`,
              body: {},
            },
            "POST /v1/proofs/{proofId}/send",
          );
          if (sent) outcome.proofsSent++;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return outcome;
}

/** Two runs' outcomes as one: what the checks read of every answer. */
export function mergeOutcomes(a: LoadOutcome, b: LoadOutcome): LoadOutcome {
  const answers = new Map<string, Map<number, number>>();
  for (const outcome of [a, b]) {
    for (const [operation, statuses] of outcome.answers) {
      const merged = answers.get(operation) ?? new Map<number, number>();
      for (const [status, count] of statuses) merged.set(status, (merged.get(status) ?? 0) + count);
      answers.set(operation, merged);
    }
  }
  return {
    succeeded: a.succeeded + b.succeeded,
    answers,
    undocumented: [...a.undocumented, ...b.undocumented],
    brokenOff: a.brokenOff + b.brokenOff,
    gaveUp: a.gaveUp + b.gaveUp,
    proofsSent: a.proofsSent + b.proofsSent,
  };
}
