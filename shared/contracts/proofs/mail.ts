/**
 * Sending proofs by email. A send writes, in one transaction, the message to the mail outbox,
 * a `sent` history entry per proof and `proof.sent`; a worker in the proofs process hands the
 * message to `SMTP_URL`, retrying on failure (each failure is a `send_failed` history entry).
 * With no `SMTP_URL`, the message stays in the outbox, delivered locally, for the operator to
 * read at `GET /admin/mail`.
 */
import { z } from "zod";
import { DateTime, described, Email, setExamples, Text, Uuid } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Proof, PROOF_EXAMPLE, ProofHistoryEntry } from "./proofs.ts";
import { ApprovalLink } from "./approval.ts";

/** Most proofs one message carries. */
export const PROOFS_PER_MESSAGE_MAX = 50;

/** Where a message stands in the outbox. */
export const MAIL_STATUSES = ["pending", "sent", "failed", "local"] as const;
export type MailStatus = typeof MAIL_STATUSES[number];

const sendFields = described({
  to: Email.optional(),
  message: Text(5000).optional(),
}, {
  to: "Where to send it; the proof's recipient when omitted",
  message: "A note from the shop, shown above the proofs",
});

export const SendProofBody = z.strictObject(sendFields).meta({
  id: "SendProofBody",
  description: "Optional: another address, and a note for the customer",
});
setExamples(SendProofBody, { message: "Here is the artwork for your staff tees." });
export type SendProofBody = z.infer<typeof SendProofBody>;

export const SendProofsBody = z.strictObject({
  proofIds: z.array(Uuid).min(1, "Give at least one proof").max(
    PROOFS_PER_MESSAGE_MAX,
    `At most ${PROOFS_PER_MESSAGE_MAX} proofs`,
  ).describe("The proofs the message carries, in order, each once (proofs of this organisation)"),
  to: sendFields.to.describe(
    "Where to send it; when omitted, the proofs must share one recipient, who gets it",
  ),
  message: sendFields.message,
}).meta({ id: "SendProofsBody", description: "Several proofs in one message" });
setExamples(SendProofsBody, {
  proofIds: [PROOF_EXAMPLE.id, "0193b1a0-8394-7fa5-80b6-c1d2e3f4a5b6"],
  message: "Front and back, for your approval.",
});
export type SendProofsBody = z.infer<typeof SendProofsBody>;

export const ProofSendResult = z.object(described({
  mailMessageId: Uuid,
  to: z.string(),
  subject: z.string(),
  delivery: z.enum(["queued", "local"]),
  proofs: z.array(Proof),
  links: z.array(ApprovalLink),
}, {
  mailMessageId: "The message in the mail outbox",
  to: "Where it goes",
  subject: "Its subject",
  delivery: "`queued`: the mail worker hands it to the mail server (`SMTP_URL`) shortly, " +
    "retrying on failure (failures appear in each proof's history as `send_failed`); " +
    "`local`: no mail server is configured, so it is kept in the local outbox " +
    "(`GET /admin/mail` on the admin API)",
  proofs: "The proofs it carries, in their new status",
  links: "Each proof's approval link, as the message carries it (for a customer reached " +
    "another way too)",
})).meta({ id: "ProofSendResult", description: "A message accepted for sending" });
export type ProofSendResult = z.infer<typeof ProofSendResult>;
const SEND_EXAMPLE: ProofSendResult = {
  mailMessageId: "0193b1a0-94a5-70b6-81c7-d2e3f4a5b6c7",
  to: PROOF_EXAMPLE.recipientEmail,
  subject: `Riverside Print Co: proof for your approval: ${PROOF_EXAMPLE.title} (revision 1)`,
  delivery: "queued",
  proofs: [PROOF_EXAMPLE],
  links: [{
    proofId: PROOF_EXAMPLE.id,
    revision: 1,
    url: "https://api.printshop.example/approve/AZOxoKGydNSe9_1xkk3Gbh3ePSbDmNqJ7x5z3xv4JEg",
    expiresAt: "2026-12-21T09:00:00.000Z",
  }],
};
setExamples(ProofSendResult, SEND_EXAMPLE);

export const ProofSent = z.object(described({
  proof: Proof,
  entry: ProofHistoryEntry,
  mailMessageId: Uuid,
}, {
  proof: "The proof as sent, in its new status",
  entry: "The `sent` entry of its history",
  mailMessageId: "The message that carries it (one message may carry several proofs)",
})).meta({ id: "ProofSent", description: "A proof was sent to its customer" });
export type ProofSent = z.infer<typeof ProofSent>;

/** A message of the mail outbox, as the operator reads it. */
export const OutboxMail = z.object({
  id: Uuid,
  organizationId: Uuid,
  to: z.string(),
  subject: z.string(),
  text: z.string(),
  html: z.string(),
  proofIds: z.array(Uuid),
  status: z.enum(MAIL_STATUSES),
  attempts: z.int(),
  lastError: z.string().nullable(),
  createdAt: DateTime,
  deliveredAt: DateTime.nullable(),
});
export type OutboxMail = z.infer<typeof OutboxMail>;

/**
 * The proofs service's internal route the gateway's `GET /admin/mail` reads through. It is not
 * a public operation (the gateway routes only declared operations); it takes the signed
 * internal context like every call from the gateway, holding this scope, which no credential
 * can hold (API keys and grants take only the scopes of `shared/scopes.ts`).
 */
export const INTERNAL_MAIL_PATH = "/internal/mail";
export const PLATFORM_MAIL_SCOPE = "platform.mail.read";

export const mailEvents = defineEvents("proofs", "proofs.read", {
  "proof.sent": {
    summary: "A proof was sent by email (written with the message, before the mail server " +
      "accepts it)",
    data: ProofSent,
  },
});

const SEND_EVENTS = ["proof.sent", "proof.status_changed"] as const;

export const mailOperations = operations("Proofs", {
  sendProof: {
    method: "POST",
    path: "/v1/proofs/{proofId}/send",
    scope: "proofs.write",
    summary: "Email a proof's current revision to its recipient (or `to`); answers 200 once " +
      "the message is in the outbox, without waiting for the mail server",
    body: SendProofBody,
    responses: { 200: ProofSendResult },
    events: [...SEND_EVENTS],
  },
  sendProofs: {
    method: "POST",
    path: "/v1/proofs/send",
    scope: "proofs.write",
    summary: "Email several proofs in one message; every proof must be this organisation's " +
      "(400 naming `proofIds.N`); answers 200 once the message is in the outbox",
    body: SendProofsBody,
    responses: { 200: ProofSendResult },
    events: [...SEND_EVENTS],
  },
});
