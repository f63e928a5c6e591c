/**
 * What must hold once the simulation's writes are done, and the figures it reports. Every event
 * the shop's writes put in an outbox reaches its webhook subscription; every proof mail reaches
 * the SMTP server; anything that arrived twice arrived again after a kill of the instance that
 * could have sent it the first time (a webhook from the webhooks app, a mail from proofs), with
 * the same `webhook-id` or `Message-ID` (the receivers key on them); no instance crashed; every
 * answer was a success or documented.
 */
import type { Sql } from "@printshop/shared/db";
import { EVENT_TOPICS } from "@printshop/shared/events";
import { header, type Received } from "@printshop/shared/testing/smtp";
import type { Receiver } from "../bench/receiver.ts";
import type { AppFront, InstanceRecord } from "./platform.ts";
import type { LoadOutcome } from "./load.ts";

export interface SimulationReport {
  failures: string[];
  text: string;
  figures: {
    events: number;
    delivered: number;
    webhookDuplicates: number;
    mails: number;
    mailDuplicates: number;
    deliveryP50Ms: number | null;
    deliveryP99Ms: number | null;
    allDeliveredAfterWritesMs: number | null;
    coldStartP50Ms: Record<string, number | null>;
    evictions: number;
    hardKills: number;
    killed: number;
  };
}

export interface CheckInput {
  superuser: Sql;
  organizationId: string;
  setUpAt: Date;
  receiver: Receiver;
  paths: Map<string, string>;
  smtp: { received: Received[] };
  fronts: AppFront[];
  load: LoadOutcome;
  loadStartedAt: number;
  loadEndedAt: number;
  /** When the last writes ended: from then on the platform is left to go idle. */
  idleFrom: number;
  /** Webhooks instances running when the refused deliveries' retries fell due. */
  idleInstances: () => number;
  drainTimeoutMs: number;
  evictions: number;
  hardKills: number;
  ticks: () => number;
}

interface ExpectedEvent {
  id: string;
  type: string;
}

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * The killed instance that explains a repeat at `at` of something first seen at `first`: one
 * running when it was first sent and killed before it came again (it sent it, and died before
 * recording that it had).
 */
export function explainedByKill(
  instances: InstanceRecord[],
  first: number,
  at: number,
): InstanceRecord | undefined {
  return instances.find((instance) =>
    instance.end === "killed" && instance.startedAt <= first &&
    instance.endedAt !== null && instance.endedAt >= first && instance.endedAt <= at + 1_000
  );
}

export async function checkOutcome(input: CheckInput): Promise<SimulationReport> {
  const failures: string[] = [];
  const schemas = EVENT_TOPICS.map((topic) => topic.replace(/^printshop\./, ""));
  const expectedEvents = async (): Promise<ExpectedEvent[]> => {
    const all: ExpectedEvent[] = [];
    for (const schema of schemas) {
      const rows = await input.superuser.unsafe<ExpectedEvent[]>(
        `SELECT id::text, type FROM "${schema}".outbox
         WHERE organization_id = $1 AND created_at > $2`,
        [input.organizationId, input.setUpAt],
      );
      all.push(...rows.filter((row) => input.paths.has(row.type)));
    }
    return all;
  };
  const mails = async (): Promise<{ id: string; status: string }[]> =>
    await input.superuser<{ id: string; status: string }[]>`
      SELECT id::text, status FROM proofs.mail_messages WHERE organization_id = ${input.organizationId}`;
  const messageIds = (): Map<string, number[]> => {
    const seen = new Map<string, number[]>();
    input.smtp.received.forEach((mail, index) => {
      const id = header(mail.raw, "message-id") ?? "";
      seen.set(id, [...(seen.get(id) ?? []), index]);
    });
    return seen;
  };
  const arrived = (event: ExpectedEvent): boolean =>
    input.receiver.arrivals(input.paths.get(event.type)!).has(event.id);

  // Wait for everything to arrive: the platform meanwhile goes idle, and only ticks (and the
  // instances still up) carry the rest.
  const deadline = Date.now() + input.drainTimeoutMs;
  let events: ExpectedEvent[] = [];
  let mailRows: { id: string; status: string }[] = [];
  while (true) {
    events = await expectedEvents();
    mailRows = await mails();
    const smtpIds = messageIds();
    const mailDone = mailRows.every((row) =>
      row.status === "sent" && [...smtpIds.keys()].some((id) => id.includes(row.id))
    );
    if (events.every(arrived) && mailDone) break;
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }

  const missing = events.filter((event) => !arrived(event));
  if (missing.length > 0) {
    failures.push(
      `${missing.length} of ${events.length} events never reached their webhook (e.g. ${
        missing.slice(0, 3).map((e) => `${e.type} ${e.id}`).join(", ")
      })`,
    );
  }
  const smtpIds = messageIds();
  const unsent = mailRows.filter((row) =>
    row.status !== "sent" || ![...smtpIds.keys()].some((id) => id.includes(row.id))
  );
  if (unsent.length > 0) {
    failures.push(
      `${unsent.length} of ${mailRows.length} proof mails never reached the SMTP server`,
    );
  }

  const instancesOf = (app: string): InstanceRecord[] =>
    input.fronts.find((front) => front.spec.name === app)?.instances ?? [];
  let webhookDuplicates = 0;
  for (const path of new Set(input.paths.values())) {
    const arrivals = input.receiver.arrivals(path);
    for (const repeat of input.receiver.repeats(path)) {
      webhookDuplicates++;
      const first = arrivals.get(repeat.id)!.receivedAt;
      if (!explainedByKill(instancesOf("webhooks"), first, repeat.receivedAt)) {
        failures.push(
          `webhook ${repeat.id} arrived twice with no kill of a webhooks instance between`,
        );
      }
    }
  }
  let mailDuplicates = 0;
  for (const [id, indexes] of smtpIds) {
    if (indexes.length < 2) continue;
    const first = input.smtp.received[indexes[0]!]!.receivedAt;
    for (const index of indexes.slice(1)) {
      mailDuplicates++;
      const at = input.smtp.received[index]!.receivedAt;
      if (!explainedByKill(instancesOf("proofs"), first, at)) {
        failures.push(`mail ${id} arrived twice with no kill of a proofs instance between`);
      }
    }
  }

  const all = input.fronts.flatMap((front) => front.instances);
  for (const instance of all.filter((i) => i.end === "crashed")) {
    // Its last words: a run in CI leaves no instance logs behind to read.
    const tail = await Deno.readTextFile(instance.logPath).then(
      (text) => text.slice(-1_500),
      () => "(no log)",
    );
    failures.push(
      `${instance.app} instance ${instance.id} exited on its own (code ${instance.exitCode}, ` +
        `signal ${instance.signal}); its log ends:\n${tail}`,
    );
  }
  // SIGINT, then SIGKILL 5 s later: an instance asked to stop must be gone before the SIGKILL.
  for (const instance of all.filter((i) => i.signal === "SIGKILL" && !i.killedAtOnce)) {
    failures.push(
      `${instance.app} instance ${instance.id} did not stop within 5 s of SIGINT ` +
        `(exit ${instance.exitCode ?? instance.signal}, after ${
          (instance.endedAt ?? 0) - (instance.stopAskedAt ?? 0)
        } ms)`,
    );
  }
  for (const answer of input.load.undocumented) {
    failures.push(`${answer.operation} answered ${answer.status}, undocumented: ${answer.body}`);
  }
  const killed = all.filter((i) => i.end === "killed").length;
  if (input.load.brokenOff > 0 && killed === 0) {
    failures.push(`${input.load.brokenOff} requests broken off with no instance killed`);
  }
  if (input.load.succeeded === 0) failures.push("no write succeeded");

  const during: number[] = [];
  let lastArrival = 0;
  for (const path of new Set(input.paths.values())) {
    for (const arrival of input.receiver.arrivals(path).values()) {
      lastArrival = Math.max(lastArrival, arrival.receivedAt);
      if (arrival.occurredAt >= input.loadStartedAt && arrival.occurredAt <= input.loadEndedAt) {
        during.push(arrival.receivedAt - arrival.occurredAt);
      }
    }
  }
  const coldStartP50Ms: Record<string, number | null> = {};
  for (const front of input.fronts) {
    coldStartP50Ms[front.spec.name] = percentile(front.coldStarts.map((c) => c.ms), 50);
  }
  const figures = {
    events: events.length,
    delivered: events.length - missing.length,
    webhookDuplicates,
    mails: mailRows.length,
    mailDuplicates,
    deliveryP50Ms: percentile(during, 50),
    deliveryP99Ms: percentile(during, 99),
    allDeliveredAfterWritesMs: missing.length === 0 && events.length > 0
      ? Math.max(0, lastArrival - input.idleFrom)
      : null,
    coldStartP50Ms,
    evictions: input.evictions,
    hardKills: input.hardKills,
    killed,
  };
  const byEnd = (end: string): number => all.filter((i) => i.end === end).length;
  const round = (ms: number | null): string => ms === null ? "–" : `${Math.round(ms)} ms`;
  const lines = [
    `writes: ${input.load.succeeded} succeeded (${input.load.proofsSent} proofs sent), ` +
    `${input.load.gaveUp} given up, ${input.load.brokenOff} broken off by a kill`,
    `answers: ${
      [...input.load.answers].map(([op, statuses]) =>
        `${op} ${[...statuses].map(([s, n]) => `${s}×${n}`).join(" ")}`
      ).join("; ")
    }`,
    `instances: ${all.length} started; ${byEnd("idle")} stopped idle, ${byEnd("evicted")} ` +
    `evicted, ${killed} killed, ${byEnd("crashed")} crashed; ${input.evictions} evictions ` +
    `(${input.hardKills} at once), ${input.ticks()} ticks`,
    `events: ${figures.delivered}/${figures.events} delivered, ${webhookDuplicates} sent twice`,
    `mail: ${mailRows.length - unsent.length}/${mailRows.length} sent, ${mailDuplicates} twice`,
    `event → webhook while writes flow: p50 ${round(figures.deliveryP50Ms)}, p99 ${
      round(figures.deliveryP99Ms)
    } (goal p99 ≤ 2 s)`,
    `everything delivered ${round(figures.allDeliveredAfterWritesMs)} after the last write, ` +
    `the last deliveries refused once and left to the platform going idle (` +
    `${input.idleInstances()} webhooks instances up when their retries fell due; goal ≤ 70 s)`,
    `cold start, first request p50: ${
      Object.entries(coldStartP50Ms).map(([app, ms]) => `${app} ${round(ms)}`).join(", ")
    }`,
    failures.length === 0 ? "OK" : `FAILED:\n  ${failures.join("\n  ")}`,
  ];
  return { failures, text: lines.join("\n"), figures };
}
