/**
 * The mail outbox. A send writes its message here in the transaction that records the proofs
 * as sent, so a message exists exactly when its `sent` entries do; the mail worker
 * (`../mail_worker.ts`) then claims due messages and records each attempt's outcome.
 */
import {
  platformRead,
  platformTransaction,
  type Sql,
  transaction,
  withOrganization,
} from "@printshop/shared/db";
import {
  APPROVAL_LINK_DAYS,
  MAIL_STATUSES,
  type OutboxMail,
  type Proof,
  type ProofSendResult,
  type SendProofsBody,
} from "@printshop/shared/contracts/proofs";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { ApiError, type ErrorDetail, invalid, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { currentTraceparent } from "@printshop/shared/telemetry";
import type { Caller } from "@printshop/shared/internal-context";
import { writeEvent } from "@printshop/shared/outbox";
import { composeMail } from "../domain/mail_message.ts";
import { linkExpiry } from "../domain/approval_link.ts";
import { type LinkKey, linkToken } from "@printshop/shared/link-token";
import { approvalUrl } from "../domain/approval_token.ts";
import { confirmedBySend, sendRefusal, type SendTarget } from "../domain/deciding_links.ts";
import { lockSendTargets } from "./proof_reads.ts";
import { PROOFS } from "./proof_rows.ts";
import { confirmRecipients } from "./proofs.ts";
import { recordProofSent, recordSendFailures } from "./history.ts";
import { insertApprovalLinks, type NewApprovalLink } from "./approval_links.ts";

const MAIL = defineTable({
  name: "mail_messages",
  tenant: true,
  noun: "Mail message",
  // `proofIds` is not a column: mail_message_proofs holds it (listOutbox).
  columns: {
    id: col.uuid(),
    organizationId: col.uuid(),
    to: col.text().named("to_address"),
    subject: col.text(),
    text: col.text().named("text_body"),
    html: col.text().named("html_body"),
    // Not a column: mail_message_proofs holds them (listOutbox).
    proofIds: col.computed<string[]>(),
    status: col.enum(MAIL_STATUSES),
    attempts: col.integer(),
    lastError: col.text().nullable(),
    createdAt: col.timestamp(),
    deliveredAt: col.timestamp().nullable(),
  },
});

type MailRow = RowOf<typeof MAIL>;

/** NOTIFY channel that wakes the mail worker when a message is queued. */
export const MAIL_CHANNEL = "proofs_mail";

/** `queued` for the mail worker to send (SMTP_URL set), or kept `local`ly (unset). */
export type Delivery = ProofSendResult["delivery"];

/**
 * Refuses (400, naming each `proofIds.N`) a proof named twice or one the organisation does not
 * have (not among `found`): an unknown id and another organisation's look the same.
 */
function assertProofIds(proofIds: readonly string[], found: readonly SendTarget[]): void {
  const known = new Set(found.map((r) => r.id));
  const seen = new Set<string>();
  const problems: ErrorDetail[] = [];
  proofIds.forEach((id, i) => {
    if (seen.has(id)) {
      problems.push({
        path: `proofIds.${i}`,
        message: `Proof "${id}" is named twice; name it once`,
      });
    } else if (!known.has(id)) {
      problems.push({
        path: `proofIds.${i}`,
        message: `Proof "${id}" was not found in this organisation; give one of its proofs`,
      });
    }
    seen.add(id);
  });
  if (problems.length > 0) throw invalid("send", problems);
}

/** What a send's approval links need: the key they are signed with, and where they point. */
export interface LinkSettings {
  key: LinkKey;
  /** The gateway's public base URL. */
  publicUrl: string;
  /** The shop's name, as the page shows it. */
  shopName: string;
  /**
   * Whether the caller holds `proofs.approve`. A link decides its proof, so only such a caller
   * sees the links' URLs in the answer and chooses where they go: it sends anywhere, and a send
   * of it to a proof's recipient confirms that recipient; any other caller sends only to each
   * proof's confirmed recipient (domain/deciding_links.ts).
   */
  mayApprove: boolean;
}

/**
 * Sends proofs in one message: for each proof a `sent` entry (which moves a draft to `sent`;
 * a decided proof is 409), `proof.sent` and an approval link, and the message (carrying the
 * links) in the outbox, all in one transaction. `many` is the several-proofs operation, which
 * names unknown ids as `proofIds.N` (400); the one-proof operation answers 404 for an unknown
 * proof.
 */
export async function sendProofs(
  sql: Sql,
  organizationId: string,
  input: SendProofsBody,
  options: { caller: Caller; delivery: Delivery; many: boolean; links: LinkSettings },
): Promise<ProofSendResult> {
  return await transaction(sql, async (tx) => {
    // Every check below reads rows locked first: a recipient changed while this send runs is
    // waited for, so the address checked is the address the message goes to and the history
    // records.
    const sorted = [...input.proofIds].sort();
    const targets = await lockSendTargets(tx, organizationId, sorted);
    if (options.many) assertProofIds(input.proofIds, targets);
    else if (targets.length === 0) throw notFound(PROOFS.noun, input.proofIds[0]!);
    const emails = [...new Set(targets.map((r) => r.recipientEmail))];
    if (input.to === undefined && emails.length > 1) {
      throw invalid("send", [{
        path: "to",
        message: `The proofs go to different recipients (${
          emails.map((e) => `"${e}"`).join(", ")
        }); give "to" to send them in one message`,
      }]);
    }
    const to = input.to ?? emails[0]!;
    if (options.links.mayApprove) {
      await confirmRecipients(tx, confirmedBySend(targets, to));
    } else {
      const refusal = sendRefusal(targets, to);
      if (refusal !== null) throw new ApiError("insufficient_scope", refusal);
    }
    const sent = new Map<string, Awaited<ReturnType<typeof recordProofSent>>>();
    for (const id of sorted) {
      // Each proof is locked already (above); this records its `sent` entry and move.
      sent.set(
        id,
        await recordProofSent(tx, organizationId, id, { sentTo: to, caller: options.caller }),
      );
    }
    const proofs: Proof[] = input.proofIds.map((id) => sent.get(id)!.proof);
    // Greeted by name when the message goes to a proof's own recipient.
    const recipientName = proofs.find((p) => p.recipientEmail === to)?.recipientName ?? null;
    const expiresAt = linkExpiry(new Date(), APPROVAL_LINK_DAYS);
    const links: NewApprovalLink[] = proofs.map((proof) => ({
      id: uuidv7(),
      proofId: proof.id,
      revision: proof.revision.number,
      expiresAt,
    }));
    const urls = links.map((link) =>
      approvalUrl(options.links.publicUrl, linkToken(options.links.key, link.id))
    );
    const mail = composeMail(proofs, recipientName, input.message, {
      shopName: options.links.shopName,
      urls,
      expiresAt,
    });
    const id = uuidv7();
    const local = options.delivery === "local";
    await tx`
      INSERT INTO mail_messages ${
      tx({
        id,
        organization_id: organizationId,
        to_address: to,
        subject: mail.subject,
        text_body: mail.text,
        html_body: mail.html,
        status: local ? "local" : "pending",
        delivered_at: local ? new Date() : null,
        traceparent: local ? null : currentTraceparent(),
      })
    }`;
    await tx`
      INSERT INTO mail_message_proofs ${
      tx(proofs.map((proof, i) => ({
        organization_id: organizationId,
        message_id: id,
        position: i + 1,
        proof_id: proof.id,
        revision_id: proof.revision.id,
      })))
    }`;
    await insertApprovalLinks(tx, organizationId, links, {
      mailMessageId: id,
      sentTo: to,
      shopName: options.links.shopName,
    });
    for (const proof of proofs) {
      await writeEvent(tx, {
        organizationId,
        type: "proof.sent",
        aggregateId: proof.id,
        payload: { proof, entry: sent.get(proof.id)!.entry, mailMessageId: id },
      });
    }
    if (!local) await tx`SELECT pg_notify(${MAIL_CHANNEL}, '')`;
    return {
      mailMessageId: id,
      to,
      subject: mail.subject,
      delivery: options.delivery,
      proofs,
      links: links.map((link, i) => ({
        proofId: link.proofId,
        revision: link.revision,
        url: options.links.mayApprove ? urls[i]! : null,
        expiresAt: link.expiresAt.toISOString(),
      })),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// The worker's side

/** A message the worker sends: the outbox's row, as claimed, with the trace it continues. */
export type DueMail = MailRow & { traceparent: string | null };

/**
 * Claims up to `limit` due messages: each is leased for `leaseMs` (pushed into the future), so
 * another replica's worker does not take it meanwhile, and a crash mid-send retries it later.
 * Due messages are every organisation's, and the worker serves none in particular: the claim
 * runs past the policies (platformTransaction), and touches nothing but the lease. What is then
 * recorded of each message runs for its own organisation.
 */
export async function claimDueMail(sql: Sql, limit: number, leaseMs: number): Promise<DueMail[]> {
  return await platformTransaction(sql, (tx) =>
    tx<DueMail[]>`
      UPDATE mail_messages m SET next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
      WHERE m.id IN (
        SELECT id FROM mail_messages WHERE status = 'pending' AND next_attempt_at <= now()
        ORDER BY next_attempt_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING ${tx.unsafe(MAIL.selectAs("m"))}, m.traceparent`);
}

/**
 * Messages waiting for the mail server (queued or between retries), of every organisation: the
 * queue's depth for the metrics, past the policies (platformRead), through the due index.
 */
export async function pendingMailCount(sql: Sql): Promise<number> {
  const [row] = await platformRead(sql, (q) =>
    q<{ count: number }[]>`
      SELECT count(*)::int AS count FROM mail_messages WHERE status = 'pending'`);
  return row!.count;
}

/**
 * Records a delivery, for the message's organisation. The server took the message, so it is
 * `sent` whatever another worker recorded meanwhile (a lease that ran out mid-attempt), once: a
 * message already `sent` is left as it is.
 */
export async function markMailSent(sql: Sql, mail: DueMail): Promise<void> {
  await withOrganization(mail.organization_id, () =>
    transaction(sql, async (tx) => {
      await tx`
        UPDATE mail_messages SET status = 'sent', attempts = attempts + 1, delivered_at = now()
        WHERE organization_id = ${mail.organization_id} AND id = ${mail.id}
          AND status IN ('pending', 'failed')`;
    }));
}

/**
 * Records a failed attempt: the message's error and, for each proof it carries, a `send_failed`
 * entry in the history of the revision it was sent for. `retryInMs` null: no attempt is left.
 * Only while the message is as `mail` claimed it (pending, after as many attempts): when another
 * worker settled it meanwhile (its claim's lease ran out mid-attempt and the message was claimed
 * again), this outcome is out of date and records nothing, so a delivered message never goes
 * back to pending and no failure is written for it.
 */
export async function recordMailFailure(
  sql: Sql,
  mail: DueMail,
  error: string,
  retryInMs: number | null,
): Promise<void> {
  const organizationId = mail.organization_id;
  await withOrganization(organizationId, () =>
    transaction(sql, async (tx) => {
      const updated = await tx`
        UPDATE mail_messages SET attempts = attempts + 1, last_error = ${error},
          status = ${retryInMs === null ? "failed" : "pending"},
          next_attempt_at = now() + ${retryInMs ?? 0} * interval '1 millisecond'
        WHERE organization_id = ${organizationId} AND id = ${mail.id} AND status = 'pending'
          AND attempts = ${mail.attempts}
        RETURNING id`;
      if (updated.length === 0) return;
      const carried = await tx<{ proofId: string; revisionId: string }[]>`
        SELECT proof_id AS "proofId", revision_id AS "revisionId" FROM mail_message_proofs
        WHERE message_id = ${mail.id} ORDER BY position`;
      await recordSendFailures(tx, organizationId, carried, { sentTo: mail.to_address, error });
    }));
}

// ---------------------------------------------------------------------------------------------
// Reading the outbox (the operator, through the gateway's admin API)

type OutboxRow = MailRow & { proof_ids: string[] };

function toOutboxMail(row: OutboxRow): OutboxMail {
  return MAIL.read(row, { proofIds: row.proof_ids });
}

/**
 * The newest `limit` messages of every organisation, newest first, for the platform's operator
 * (the gateway's admin API): across organisations by design, so past the policies
 * (platformRead); it writes nothing.
 */
export async function listOutbox(sql: Sql, limit: number): Promise<OutboxMail[]> {
  const rows = await platformRead(sql, (q) =>
    q<OutboxRow[]>`
      SELECT ${q.unsafe(MAIL.selectAs("m"))},
        COALESCE((SELECT array_agg(p.proof_id ORDER BY p.position) FROM mail_message_proofs p
          WHERE p.message_id = m.id), '{}') AS proof_ids
      FROM mail_messages m ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit}`);
  return rows.map(toOutboxMail);
}
