/**
 * The mail worker: hands queued messages of the outbox to the mail server (`SMTP_URL`) with
 * nodemailer, a few at a time, outside any request. A refused or failed attempt is recorded in
 * each carried proof's history (`send_failed`, with the error and no secret) and retried after
 * the next delay of its schedule; when the schedule runs out the message is `failed`.
 */
// @ts-types="@types/nodemailer"
import nodemailer from "nodemailer";
import { loopFailed, onDatabaseBack, type Sql } from "@printshop/shared/db";
import { Backoff, Waker } from "@printshop/shared/events/waker";
import { mailAttempts, mailQueue, sampleInto } from "@printshop/shared/metrics";
import { SpanKind, withSpan } from "@printshop/shared/telemetry";
import type { Logger } from "@printshop/shared/log";
import type { Stoppable } from "@printshop/shared/service-main";
import {
  claimDueMail,
  type DueMail,
  MAIL_CHANNEL,
  markMailSent,
  pendingMailCount,
  recordMailFailure,
} from "./store/mail.ts";

/** Waits between attempts; a message gets one attempt more than the schedule has delays. */
export const MAIL_RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  30_000,
  120_000,
  600_000,
  3_600_000,
];

export interface MailWorkerOptions {
  retryDelaysMs?: readonly number[];
  /** Safety net under LISTEN/NOTIFY, and how due retries are found. */
  pollIntervalMs?: number;
  /** Per attempt: connecting, the greeting and each socket read. */
  timeoutMs?: number;
  /** Messages sent at once. */
  concurrency?: number;
  /** Whether a queued message wakes the worker through LISTEN (yes unless said); else it polls. */
  listen?: boolean;
}

/** The mail worker as its process holds it: stopped at the end, settled by a kick or a tick. */
export interface MailWorker extends Stoppable {
  /** Sends what is due now; resolves once those attempts are recorded. */
  settle(): Promise<void>;
}

/** What nodemailer needs from `SMTP_URL`; `?from=` is the sender, not a transport option. */
export function transportOptions(smtpUrl: string, timeoutMs: number): {
  options: Record<string, unknown>;
  from: string;
  secrets: string[];
} {
  const url = new URL(smtpUrl);
  const secure = url.protocol === "smtps:";
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  return {
    options: {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port ? Number(url.port) : secure ? 465 : 587,
      secure,
      ...(user ? { auth: { user, pass } } : {}),
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    },
    from: url.searchParams.get("from") ?? "proofs@localhost",
    secrets: [pass, url.password].filter((s) => s.length > 0),
  };
}

/**
 * The `Message-ID` of a queued message, from its id in the outbox and the sender's domain
 * (RFC 5322: unique, with a domain on the right), so every attempt carries the same one.
 */
export function messageIdOf(mailId: string, from: string): string {
  const domain = /@([^\s@>]+)>?\s*$/.exec(from)?.[1] ?? "localhost";
  return `<${mailId}@${domain}>`;
}

/** An error as kept in a history: its message, without the credentials of `SMTP_URL`. */
export function errorText(error: unknown, secrets: readonly string[]): string {
  let text = error instanceof Error ? error.message : String(error);
  for (const secret of secrets) text = text.replaceAll(secret, "***");
  return text.slice(0, 1000);
}

export async function startMailWorker(
  deps: { sql: Sql; logger: Logger; smtpUrl: string },
  options: MailWorkerOptions = {},
): Promise<MailWorker> {
  const delays = options.retryDelaysMs ?? MAIL_RETRY_DELAYS_MS;
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const concurrency = options.concurrency ?? 8;
  const { options: transport, from, secrets } = transportOptions(deps.smtpUrl, timeoutMs);
  // Pooled: a connection is opened, greeted and authenticated once and reused for the next
  // messages (opening one per message cost ~110 ms a message on loopback, see the bench); a
  // connection the server dropped is replaced on the next send.
  const transporter = nodemailer.createTransport({
    ...transport,
    pool: true,
    maxConnections: concurrency,
  });
  const waker = new Waker();
  // Back from a database outage: claim at once, rather than at the end of a backoff.
  const forgetBack = onDatabaseBack(() => waker.wake());
  const listener = options.listen === false
    ? null
    : await deps.sql.listen(MAIL_CHANNEL, () => waker.wake());
  const backoff = new Backoff(250, 10_000);
  let running = true;

  const stopSampling = sampleInto(mailQueue, async () => [{
    value: await pendingMailCount(deps.sql),
    attributes: { status: "pending" },
  }]);

  // Each attempt continues the trace of the request that sent the proofs. No address, subject or
  // body on the span: they are personal data.
  const attempt = (mail: DueMail): Promise<void> =>
    withSpan(
      "proof mail send",
      {
        "printshop.mail.message_id": mail.id,
        "printshop.mail.attempt": mail.attempts + 1,
        "server.address": transport.host as string,
        "server.port": transport.port as number,
      },
      () => send(mail),
      SpanKind.CLIENT,
      { parent: mail.traceparent },
    );

  const send = async (mail: DueMail): Promise<void> => {
    try {
      await transporter.sendMail({
        // The same for every attempt of one message: a receiver that got an attempt whose
        // outcome this worker never recorded (it stopped mid-send) can tell the retry is a copy.
        messageId: messageIdOf(mail.id, from),
        from,
        to: mail.to_address,
        subject: mail.subject,
        text: mail.text_body,
        html: mail.html_body,
      });
      mailAttempts.add(1, { outcome: "sent" });
      await markMailSent(deps.sql, mail);
    } catch (error) {
      const text = errorText(error, secrets);
      const retryIn = delays[mail.attempts] ?? null;
      deps.logger.warn("proof mail not accepted", {
        mailMessageId: mail.id,
        attempt: mail.attempts + 1,
        retryInMs: retryIn,
        error: text,
      });
      mailAttempts.add(1, { outcome: "failed" });
      await recordMailFailure(deps.sql, mail, text, retryIn);
    }
  };

  const loop = (async () => {
    while (running) {
      let claimed: DueMail[] = [];
      try {
        // Leased for longer than an attempt can take, so a crash mid-send is retried later.
        claimed = await claimDueMail(deps.sql, concurrency, timeoutMs * 4);
        backoff.reset();
        await Promise.all(
          claimed.map((mail) =>
            attempt(mail).catch((error) =>
              deps.logger.error("proof mail outcome could not be recorded", {
                mailMessageId: mail.id,
                error: error instanceof Error ? error.message : String(error),
              })
            )
          ),
        );
      } catch (error) {
        loopFailed(deps.logger, "mail worker cannot claim messages", error);
        await waker.sleep(backoff.next());
        continue;
      }
      if (claimed.length < concurrency) await waker.sleep(pollIntervalMs);
    }
  })();

  return {
    async stop() {
      if (!running) return;
      running = false;
      stopSampling();
      forgetBack();
      waker.wake();
      await loop;
      waker.release();
      await listener?.unlisten().catch(() => {});
      transporter.close();
    },
    settle: () => running ? waker.settle() : Promise.resolve(),
  };
}
