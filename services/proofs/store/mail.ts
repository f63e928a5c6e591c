/**
 * The mail outbox. A send writes its message here in the transaction that records the proofs
 * as sent, so a message exists exactly when its `sent` entries do; the mail worker
 * (`../mail_worker.ts`) then claims due messages and records each attempt's outcome.
 */
import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import type {
  OutboxMail,
  Proof,
  ProofSendResult,
  SendProofsBody,
} from "@printshop/shared/contracts/proofs";
import { ApiError, type ErrorDetail, invalid } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import { APPROVAL_LINK_DAYS } from "@printshop/shared/contracts/proofs";
import { composeMail } from "../domain/mail_message.ts";
import { linkExpiry } from "../domain/approval_link.ts";
import { type LinkKey, linkToken } from "@printshop/shared/link-token";
import { approvalUrl } from "../domain/approval_token.ts";
import { type Caller, recordProofSent } from "./proofs.ts";
import { insertApprovalLinks, type NewApprovalLink } from "./approval_links.ts";

/** NOTIFY channel that wakes the mail worker when a message is queued. */
export const MAIL_CHANNEL = "proofs_mail";

/** `queued` for the mail worker to send (SMTP_URL set), or kept `local`ly (unset). */
export type Delivery = ProofSendResult["delivery"];

/**
 * Refuses (400, naming each `proofIds.N`) a proof named twice or one the organisation does not
 * have: an unknown id and another organisation's look the same.
 */
async function assertProofIds(
  sql: Queryable,
  organizationId: string,
  proofIds: readonly string[],
): Promise<void> {
  const found = await sql<{ id: string }[]>`
    SELECT id FROM proofs WHERE organization_id = ${organizationId}
      AND id = ANY(${[...proofIds]}::uuid[])`;
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
   * sees the links' URLs in the answer, and only such a caller may send them anywhere but to
   * each proof's own recipient.
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
  if (options.many) await assertProofIds(sql, organizationId, input.proofIds);
  return await transaction(sql, async (tx) => {
    // Locked in id order, so two sends of overlapping proofs cannot deadlock.
    const sorted = [...input.proofIds].sort();
    const recipients = await tx<{ recipient_email: string }[]>`
      SELECT recipient_email FROM proofs
      WHERE organization_id = ${organizationId} AND id = ANY(${sorted}::uuid[])`;
    const emails = [...new Set(recipients.map((r) => r.recipient_email))];
    if (input.to === undefined && emails.length > 1) {
      throw invalid("send", [{
        path: "to",
        message: `The proofs go to different recipients (${
          emails.map((e) => `"${e}"`).join(", ")
        }); give "to" to send them in one message`,
      }]);
    }
    const to = input.to ?? emails[0];
    const elsewhere = emails.some((email) => email.toLowerCase() !== to!.toLowerCase());
    if (elsewhere && !options.links.mayApprove) {
      throw new ApiError(
        "insufficient_scope",
        `Sending to an address other than the proof's recipient needs scope "proofs.approve": ` +
          "the message carries approval links, and a link decides its proof",
      );
    }
    const sent = new Map<string, Awaited<ReturnType<typeof recordProofSent>>>();
    for (const id of sorted) {
      // recordProofSent locks the proof, and answers 404 for one the organisation lacks.
      sent.set(
        id,
        await recordProofSent(tx, organizationId, id, { sentTo: to!, caller: options.caller }),
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
        to_address: to!,
        subject: mail.subject,
        text_body: mail.text,
        html_body: mail.html,
        status: local ? "local" : "pending",
        delivered_at: local ? new Date() : null,
      })
    }`;
    await tx`
      INSERT INTO mail_message_proofs ${
      tx(proofs.map((proof, i) => ({
        message_id: id,
        position: i + 1,
        proof_id: proof.id,
        revision_id: proof.revision.id,
      })))
    }`;
    await insertApprovalLinks(tx, organizationId, links, {
      mailMessageId: id,
      sentTo: to!,
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
      to: to!,
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

export interface DueMail {
  id: string;
  organization_id: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  attempts: number;
}

/**
 * Claims up to `limit` due messages: each is leased for `leaseMs` (pushed into the future), so
 * another replica's worker does not take it meanwhile, and a crash mid-send retries it later.
 */
export async function claimDueMail(sql: Sql, limit: number, leaseMs: number): Promise<DueMail[]> {
  return await sql<DueMail[]>`
    UPDATE mail_messages m SET next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
    WHERE m.id IN (
      SELECT id FROM mail_messages WHERE status = 'pending' AND next_attempt_at <= now()
      ORDER BY next_attempt_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING m.id, m.organization_id, m.to_address, m.subject, m.text_body, m.html_body,
      m.attempts`;
}

export async function markMailSent(sql: Sql, id: string): Promise<void> {
  await sql`
    UPDATE mail_messages SET status = 'sent', attempts = attempts + 1, delivered_at = now()
    WHERE id = ${id}`;
}

/**
 * Records a failed attempt: the message's error and, for each proof it carries, a `send_failed`
 * entry in the history of the revision it was sent for. `retryInMs` null: no attempt is left.
 */
export async function recordMailFailure(
  sql: Sql,
  mail: DueMail,
  error: string,
  retryInMs: number | null,
): Promise<void> {
  await transaction(sql, async (tx) => {
    await tx`
      UPDATE mail_messages SET attempts = attempts + 1, last_error = ${error},
        status = ${retryInMs === null ? "failed" : "pending"},
        next_attempt_at = now() + ${retryInMs ?? 0} * interval '1 millisecond'
      WHERE id = ${mail.id}`;
    await tx`
      INSERT INTO proof_history (id, organization_id, proof_id, revision_id, kind, sent_to, note)
      SELECT gen_random_uuid(), ${mail.organization_id}, proof_id, revision_id, 'send_failed',
        ${mail.to_address}, ${error}
      FROM mail_message_proofs WHERE message_id = ${mail.id} ORDER BY position`;
  });
}

// ---------------------------------------------------------------------------------------------
// Reading the outbox (the operator, through the gateway's admin API)

interface OutboxRow {
  id: string;
  organization_id: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  status: OutboxMail["status"];
  attempts: number;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
  proof_ids: string[];
}

/** The newest `limit` messages of every organisation, newest first. */
export async function listOutbox(sql: Queryable, limit: number): Promise<OutboxMail[]> {
  const rows = await sql<OutboxRow[]>`
    SELECT m.id, m.organization_id, m.to_address, m.subject, m.text_body, m.html_body, m.status,
      m.attempts, m.last_error, m.created_at, m.delivered_at,
      COALESCE((SELECT array_agg(p.proof_id ORDER BY p.position) FROM mail_message_proofs p
        WHERE p.message_id = m.id), '{}') AS proof_ids
    FROM mail_messages m ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit}`;
  return rows.map((r) => ({
    id: r.id,
    organizationId: r.organization_id,
    to: r.to_address,
    subject: r.subject,
    text: r.text_body,
    html: r.html_body,
    proofIds: r.proof_ids,
    status: r.status,
    attempts: r.attempts,
    lastError: r.last_error,
    createdAt: r.created_at.toISOString(),
    deliveredAt: r.delivered_at?.toISOString() ?? null,
  }));
}
