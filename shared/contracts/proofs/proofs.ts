/**
 * Proofs: what a shop asks its customer to approve before production (spec 4.9). A proof
 * belongs to a quote or a job, goes to one recipient, and holds numbered revisions (each with
 * its mocks or image URLs and notes) and items linking it to quote lines. Its history keeps, per
 * revision, every send, view, decision and manual status change, in time order.
 */
import { z } from "zod";
import {
  atLeastOneOf,
  CREDENTIAL_KINDS,
  DateTime,
  Deleted,
  described,
  Email,
  page,
  setExamples,
  Text,
  Uuid,
} from "../common.ts";
import { offsetListQuery } from "../lists.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import {
  CreateProofItemLinkBody,
  PROOF_ID_EXAMPLE,
  PROOF_ITEM_LINK_EXAMPLE,
  ProofItemLink,
} from "./item_links.ts";
import {
  ClientDecision,
  DECISION_CHANNELS,
  DECISION_COMMENT_MAX,
  DECISION_WORDING,
  ImageList,
  IMAGES_MAX,
  PROOF_ENTRY_KINDS,
  PROOF_ITEMS_MAX,
  ProofStatus,
  SIGNER_NAME_MAX,
  SizeQuantities,
  STATUS_CAUSES,
} from "./values.ts";

const CREDENTIAL_ID_EXAMPLE = "0192f3aa-0b1c-7d2e-8f30-4a5b6c7d8e9f";

// ---------------------------------------------------------------------------------------------
// Revisions

const REVISION_DESCRIPTIONS = {
  id: "The revision's id",
  number: "Its number, from 1; the highest is the current revision",
  mockIds: "The mocks it shows, in order (mocks of this organisation); their images come first",
  imageUrls: "Further images it shows, https URLs, after the mocks' images",
  notes: "What changed in this revision, or notes for the customer",
  createdAt: "When it was opened",
};

const revisionShape = {
  id: Uuid,
  number: z.int().min(1),
  mockIds: z.array(Uuid),
  imageUrls: z.array(z.string()),
  notes: z.string().nullable(),
  createdAt: DateTime,
};

export const ProofRevision = z.object(described(revisionShape, REVISION_DESCRIPTIONS)).meta({
  id: "ProofRevision",
  description: "One numbered version of what a proof shows",
});
export type ProofRevision = z.infer<typeof ProofRevision>;

const REVISION_EXAMPLE: ProofRevision = {
  id: "0193b1a0-5061-7c72-8d83-9eafb0c1d2e3",
  number: 1,
  mockIds: ["0193b1a0-1c2d-7e3f-8a40-5b6c7d8e9fa0"],
  imageUrls: ["https://files.inkwellprint.com.au/proofs/riverside-colour-card.png"],
  notes: "Logo as supplied, PMS 1795 red",
  createdAt: "2026-11-20T23:25:40.117Z",
};
setExamples(ProofRevision, REVISION_EXAMPLE);

// ---------------------------------------------------------------------------------------------
// Proofs

const PROOF_DESCRIPTIONS = {
  id: "The proof's id",
  quoteId: "The quote it is for (an id in the quotes service; kept as given, not checked); a " +
    "proof names a quote, a job or both",
  jobId: "The production job it is for (kept as given; no service keeps jobs here)",
  title: "What it is, in a line, as the customer reads it",
  recipientName: "Who is asked to approve it",
  recipientEmail: "Where it is sent",
  status: "`draft`, `sent`, `viewed`, `approved`, `changes_requested` or `rejected`",
  revision: "The current revision: what the customer is asked about now",
  items: "The quote lines it is about, with their quantities per size, oldest first",
  createdAt: "When it was created",
  updatedAt: "When it last changed",
};

export const Proof = z.object(described({
  id: Uuid,
  quoteId: Uuid.nullable(),
  jobId: Uuid.nullable(),
  title: z.string().nullable(),
  recipientName: z.string(),
  recipientEmail: z.string(),
  status: ProofStatus,
  revision: ProofRevision,
  items: z.array(ProofItemLink),
  createdAt: DateTime,
  updatedAt: DateTime,
}, PROOF_DESCRIPTIONS)).meta({
  id: "Proof",
  description: "Artwork a customer is asked to approve, with its current revision and items",
});
export type Proof = z.infer<typeof Proof>;

export const PROOF_EXAMPLE: Proof = {
  id: PROOF_ID_EXAMPLE,
  quoteId: "0193a3e0-1b2c-7d3e-8f40-516273849506",
  jobId: null,
  title: "Riverside Bakery staff tees",
  recipientName: "Sam Nguyen",
  recipientEmail: "sam@riversidebakery.com.au",
  status: "sent",
  revision: REVISION_EXAMPLE,
  items: [PROOF_ITEM_LINK_EXAMPLE],
  createdAt: "2026-11-20T23:25:40.117Z",
  updatedAt: "2026-11-21T08:02:44.310Z",
};
setExamples(Proof, PROOF_EXAMPLE);

const MockIds = z.array(Uuid).max(IMAGES_MAX, `At most ${IMAGES_MAX} mocks`);
const revisionFields = described({
  mockIds: MockIds,
  imageUrls: ImageList,
  notes: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
}, {
  ...REVISION_DESCRIPTIONS,
  mockIds: `${REVISION_DESCRIPTIONS.mockIds}; a revision shows at least one mock or image`,
});

/** A proof belongs to a quote or a job (or both): one of these is given and not null. */
export const PROOF_OWNER_FIELDS = ["quoteId", "jobId"] as const;

/** What a revision must show, as the document says it (the server's rules.ts enforces it). */
const SHOWS_SOMETHING = atLeastOneOf({ mockIds: "list", imageUrls: "list" });

const proofFields = described({
  quoteId: Uuid.nullable(),
  jobId: Uuid.nullable(),
  title: Text(200).nullable(),
  recipientName: Text(200),
  recipientEmail: Email,
}, PROOF_DESCRIPTIONS);

export const CreateProofBody = z.strictObject({
  quoteId: proofFields.quoteId.optional(),
  jobId: proofFields.jobId.optional(),
  title: proofFields.title.optional(),
  recipientName: proofFields.recipientName,
  recipientEmail: proofFields.recipientEmail,
  mockIds: revisionFields.mockIds.optional(),
  imageUrls: revisionFields.imageUrls.optional(),
  notes: revisionFields.notes.optional(),
  items: z.array(CreateProofItemLinkBody).max(PROOF_ITEMS_MAX, `At most ${PROOF_ITEMS_MAX} items`)
    .optional().describe("Its first items, in order (more can be added later)"),
}).meta({
  id: "CreateProofBody",
  description: "A new proof in `draft`, with revision 1 (its mocks, images and notes) and its " +
    "first items",
  allOf: [
    atLeastOneOf(Object.fromEntries(PROOF_OWNER_FIELDS.map((field) => [field, "value"]))),
    SHOWS_SOMETHING,
  ],
});
setExamples(CreateProofBody, {
  quoteId: PROOF_EXAMPLE.quoteId,
  title: PROOF_EXAMPLE.title,
  recipientName: PROOF_EXAMPLE.recipientName,
  recipientEmail: PROOF_EXAMPLE.recipientEmail,
  mockIds: REVISION_EXAMPLE.mockIds,
  imageUrls: REVISION_EXAMPLE.imageUrls,
  notes: REVISION_EXAMPLE.notes,
  items: [{
    quoteLineId: PROOF_ITEM_LINK_EXAMPLE.quoteLineId,
    description: PROOF_ITEM_LINK_EXAMPLE.description,
    sizes: PROOF_ITEM_LINK_EXAMPLE.sizes,
  }],
});
export type CreateProofBody = z.infer<typeof CreateProofBody>;

export const UpdateProofBody = z.strictObject({
  quoteId: proofFields.quoteId.optional(),
  jobId: proofFields.jobId.optional(),
  title: proofFields.title.optional(),
  recipientName: proofFields.recipientName.optional(),
  recipientEmail: proofFields.recipientEmail.optional(),
}).meta({
  id: "UpdateProofBody",
  description: "The proof fields to change; those not given stay as they are (what it shows " +
    "changes by revising it)",
});
setExamples(UpdateProofBody, { recipientEmail: "orders@riversidebakery.com.au" });
export type UpdateProofBody = z.infer<typeof UpdateProofBody>;

export const ReviseProofBody = z.strictObject({
  mockIds: revisionFields.mockIds.optional(),
  imageUrls: revisionFields.imageUrls.optional(),
  notes: revisionFields.notes.optional(),
}).meta({
  id: "ReviseProofBody",
  description: "What the new revision shows: at least one mock or image",
  ...SHOWS_SOMETHING,
});
setExamples(ReviseProofBody, {
  mockIds: REVISION_EXAMPLE.mockIds,
  imageUrls: ["https://files.inkwellprint.com.au/proofs/riverside-colour-card-v2.png"],
  notes: "Logo 10% smaller, as asked",
});
export type ReviseProofBody = z.infer<typeof ReviseProofBody>;

export const SetProofStatusBody = z.strictObject(described({
  status: ProofStatus,
  note: Text(2000).optional(),
}, {
  status: "The status to set, any of them, including `approved`",
  note: "Why, kept in the history with the change",
})).meta({ id: "SetProofStatusBody", description: "A status to set directly" });
setExamples(SetProofStatusBody, {
  status: "approved",
  note: "Approved by phone with Sam, 21 Nov 9:30",
});
export type SetProofStatusBody = z.infer<typeof SetProofStatusBody>;

export const ClientDecisionBody = z.strictObject(described({
  decision: ClientDecision,
  comment: Text(DECISION_COMMENT_MAX).optional(),
  signerName: Text(SIGNER_NAME_MAX),
  signerEmail: Email.optional(),
  revision: z.int().min(1, "Must be at least 1").max(1_000_000)
    .optional(),
}, {
  decision: "`approve` or `request_changes`",
  comment: "The customer's words; required when requesting changes",
  signerName: "The name of the person deciding",
  signerEmail: "Their email address",
  revision: "The revision decided on; the current one when omitted, and a superseded one is " +
    "409",
})).meta({
  id: "ClientDecisionBody",
  description: "A customer's decision on the current revision, recorded on their behalf",
});
setExamples(ClientDecisionBody, {
  decision: "approve",
  signerName: "Sam Nguyen",
  signerEmail: "sam@riversidebakery.com.au",
  revision: 1,
});
export type ClientDecisionBody = z.infer<typeof ClientDecisionBody>;

export const PROOF_SORT_FIELDS = [
  "createdAt",
  "updatedAt",
  "status",
  "title",
  "recipientName",
] as const;

export const ListProofsQuery = offsetListQuery({
  sortFields: PROOF_SORT_FIELDS,
  named: described({
    status: ProofStatus.optional(),
    quoteId: Uuid.optional(),
    jobId: Uuid.optional(),
    recipientEmail: z.string().max(320, "Must be at most 320 characters").optional(),
  }, {
    status: "Only proofs in this status",
    quoteId: "Only proofs for this quote",
    jobId: "Only proofs for this job",
    recipientEmail: "Only proofs sent to this email address (as written)",
  }),
  search: true,
});
export type ListProofsQuery = z.infer<typeof ListProofsQuery>;

// ---------------------------------------------------------------------------------------------
// History and decisions

const SHOWN_DESCRIPTIONS = {
  proofId: "The proof",
  revision: "The revision number",
  title: "The proof's title as shown (null: none)",
  notes: "The revision's notes as shown (null: none)",
  images: "Every image shown, in order: the mocks' images (mock by mock), then the image URLs",
  items: "The items shown, in order, with their quantities per size",
};

const ShownItem = z.object(described({
  quoteLineId: Uuid.nullable(),
  description: z.string(),
  sizes: SizeQuantities,
}, {
  quoteLineId: "The quote line the item stands for",
  description: "The item as the customer read it",
  sizes: "The quantities per size shown",
}));

export const ShownContent = z.object(described({
  proofId: Uuid,
  revision: z.int().min(1),
  title: z.string().nullable(),
  notes: z.string().nullable(),
  images: z.array(z.string()),
  items: z.array(ShownItem),
}, SHOWN_DESCRIPTIONS)).meta({
  id: "ProofShownContent",
  description: "Exactly what a revision showed when a decision was made; `digest` is the " +
    "SHA-256 of this object as canonical JSON (keys sorted, no spaces)",
});
export type ShownContent = z.infer<typeof ShownContent>;
const SHOWN_EXAMPLE: ShownContent = {
  proofId: PROOF_ID_EXAMPLE,
  revision: 1,
  title: "Riverside Bakery staff tees",
  notes: "Logo 10 cm wide, centred on the chest",
  images: [
    "https://files.inkwellprint.com.au/mocks/riverside-front.png",
    "https://files.inkwellprint.com.au/mocks/riverside-front-detail.png",
    "https://files.inkwellprint.com.au/proofs/riverside-colour-card.png",
  ],
  items: [{
    quoteLineId: PROOF_ITEM_LINK_EXAMPLE.quoteLineId,
    description: PROOF_ITEM_LINK_EXAMPLE.description,
    sizes: PROOF_ITEM_LINK_EXAMPLE.sizes,
  }],
};
setExamples(ShownContent, SHOWN_EXAMPLE);

export const DecisionRecord = z.object(described({
  decision: ClientDecision,
  comment: z.string().nullable(),
  signerName: z.string(),
  signerEmail: z.string().nullable(),
  channel: z.enum(DECISION_CHANNELS),
  wording: z.string(),
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  shown: ShownContent,
}, {
  decision: "`approve` or `request_changes`",
  comment: "The customer's words",
  signerName: "Who decided, as they gave their name",
  signerEmail: "Their email address, when given",
  channel: "`api` (recorded on the customer's behalf by the credential named in the entry) " +
    "or `page` (the customer on the approval page; the entry has their IP address and user " +
    "agent)",
  wording: "The exact words the signer agreed to",
  digest: "SHA-256, hex, of `shown` as canonical JSON: ties the decision to what it was about",
  shown: "What the revision showed at that moment",
})).meta({
  id: "ProofDecisionRecord",
  description: "A customer's decision as evidence: who, what they agreed to, and a digest of " +
    "exactly what they saw",
});
export type DecisionRecord = z.infer<typeof DecisionRecord>;
const DECISION_EXAMPLE: DecisionRecord = {
  decision: "approve",
  comment: null,
  signerName: "Sam Nguyen",
  signerEmail: "sam@riversidebakery.com.au",
  channel: "api",
  wording: DECISION_WORDING.approve,
  digest: "5d0c3b1f2a9e8d7c6b5a49382716051f4e3d2c1b0a9f8e7d6c5b4a3928170615",
  shown: SHOWN_EXAMPLE,
};
setExamples(DecisionRecord, DECISION_EXAMPLE);

const ENTRY_DESCRIPTIONS = {
  id: "The entry's id",
  kind: "`sent`, `send_failed` (the mail server refused or was unreachable; retried), `viewed`, " +
    "`decision` or `status_changed` (a manual change by POST …/status)",
  revision: "The revision it concerns",
  occurredAt: "When it happened",
  fromStatus: "The proof's status before; null when it did not move",
  toStatus: "The proof's status after; null when it did not move",
  credentialKind: "How the credential that made it authenticated (`tenant_key` or `partner`); " +
    "null for what the customer did on the approval page",
  credentialId: "The API key or partner app that made it (`credential.id` of GET /v1/me); " +
    "null for what the customer did on the approval page",
  sentTo: "The address it was sent to (`sent` entries); null otherwise",
  ipAddress: "The customer's IP address (views and decisions on the approval page); null " +
    "otherwise",
  userAgent: "The customer's browser (views and decisions on the approval page); null " +
    "otherwise",
  note: "Why a status was set directly, when given; for `send_failed`, the mail error; null " +
    "otherwise",
  decision: "The decision (`decision` entries); null otherwise",
};

export const ProofHistoryEntry = z.object(described({
  id: Uuid,
  kind: z.enum(PROOF_ENTRY_KINDS),
  revision: z.int().min(1),
  occurredAt: DateTime,
  fromStatus: ProofStatus.nullable(),
  toStatus: ProofStatus.nullable(),
  credentialKind: z.enum(CREDENTIAL_KINDS).nullable(),
  credentialId: z.string().nullable(),
  sentTo: z.string().nullable(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  note: z.string().nullable(),
  decision: DecisionRecord.nullable(),
}, ENTRY_DESCRIPTIONS)).meta({
  id: "ProofHistoryEntry",
  description: "One thing that happened to a revision: a send, a view, a decision or a manual " +
    "status change",
});
export type ProofHistoryEntry = z.infer<typeof ProofHistoryEntry>;
const ENTRY_EXAMPLE: ProofHistoryEntry = {
  id: "0193b1a0-6172-7d83-8e94-afb0c1d2e3f4",
  kind: "decision",
  revision: 1,
  occurredAt: "2026-11-21T09:30:00.000Z",
  fromStatus: "sent",
  toStatus: "approved",
  credentialKind: "tenant_key",
  credentialId: CREDENTIAL_ID_EXAMPLE,
  sentTo: null,
  ipAddress: null,
  userAgent: null,
  note: null,
  decision: DECISION_EXAMPLE,
};
setExamples(ProofHistoryEntry, ENTRY_EXAMPLE);

export const ProofRevisionHistory = z.object(described({
  ...revisionShape,
  entries: z.array(ProofHistoryEntry),
}, {
  ...REVISION_DESCRIPTIONS,
  entries: "What happened to it, oldest first",
})).meta({
  id: "ProofRevisionHistory",
  description: "A revision with what happened to it",
});
export type ProofRevisionHistory = z.infer<typeof ProofRevisionHistory>;
setExamples(ProofRevisionHistory, { ...REVISION_EXAMPLE, entries: [ENTRY_EXAMPLE] });

export const ProofHistory = z.object(described({
  proof: Proof,
  revisions: z.array(ProofRevisionHistory),
}, {
  proof: "The proof as it is now",
  revisions: "Every revision, first to current, each with its history",
})).meta({ id: "ProofHistory", description: "A proof with its full revision history" });
export type ProofHistory = z.infer<typeof ProofHistory>;
setExamples(ProofHistory, {
  proof: { ...PROOF_EXAMPLE, status: "approved" },
  revisions: [{ ...REVISION_EXAMPLE, entries: [ENTRY_EXAMPLE] }],
});

export const ClientDecisionResult = z.object(described({
  proof: Proof,
  entry: ProofHistoryEntry,
}, {
  proof: "The proof in its new status",
  entry: "The decision as its history now holds it",
})).meta({ id: "ClientDecisionResult", description: "A recorded decision and its proof" });
export type ClientDecisionResult = z.infer<typeof ClientDecisionResult>;
setExamples(ClientDecisionResult, {
  proof: { ...PROOF_EXAMPLE, status: "approved" },
  entry: ENTRY_EXAMPLE,
});

export const ProofStatusChange = z.object(described({
  proof: Proof,
  fromStatus: ProofStatus,
  toStatus: ProofStatus,
  cause: z.enum(STATUS_CAUSES),
  revision: z.int().min(1),
  credentialKind: z.enum(CREDENTIAL_KINDS).nullable(),
  credentialId: z.string().nullable(),
}, {
  proof: "The proof in its new status",
  fromStatus: "Its status before",
  toStatus: "Its status after",
  cause: "What moved it: `manual` (POST …/status), `client_decision`, `revised`, `sent` or " +
    "`viewed`",
  revision: "The revision current when it moved",
  credentialKind: "How the credential that moved it authenticated; null when the customer did",
  credentialId: "The credential that moved it; null when the customer did",
})).meta({ id: "ProofStatusChange", description: "A move of a proof's status, and why" });
export type ProofStatusChange = z.infer<typeof ProofStatusChange>;
setExamples(ProofStatusChange, {
  proof: { ...PROOF_EXAMPLE, status: "approved" },
  fromStatus: "sent",
  toStatus: "approved",
  cause: "manual",
  revision: 1,
  credentialKind: "tenant_key",
  credentialId: CREDENTIAL_ID_EXAMPLE,
});

// ---------------------------------------------------------------------------------------------
// Events and operations

export const proofEvents = defineEvents("proofs", "proofs.read", {
  "proof.created": { summary: "A proof was created, with revision 1", data: Proof },
  "proof.updated": {
    summary: "A proof's own fields or its items changed (one event carrying the whole proof)",
    data: Proof,
  },
  "proof.deleted": { summary: "A proof was deleted with its revisions and items", data: Proof },
  "proof.revised": {
    summary: "A new revision was opened; the proof carries it as its current revision",
    data: Proof,
  },
  "proof.status_changed": {
    summary: "A proof's status moved, by hand, by a decision, a revision, a send or a view",
    data: ProofStatusChange,
  },
  "proof.client_decision_recorded": {
    summary: "A customer's decision on a revision was recorded, with its evidence",
    data: ClientDecisionResult,
  },
});

const DRAFT_EXAMPLE: Proof = {
  ...PROOF_EXAMPLE,
  status: "draft",
  updatedAt: PROOF_EXAMPLE.createdAt,
};

export const proofOperations = operations("Proofs", {
  createProof: {
    method: "POST",
    path: "/v1/proofs",
    scope: "proofs.write",
    summary: "Create a proof in `draft` for a quote or a job, with revision 1 and its items",
    body: CreateProofBody,
    responses: { 201: Proof },
    events: ["proof.created"],
    examples: { responses: { 201: DRAFT_EXAMPLE } },
  },
  listProofs: {
    method: "GET",
    path: "/v1/proofs",
    scope: "proofs.read",
    summary: "List proofs, newest first unless sorted otherwise",
    query: ListProofsQuery,
    responses: { 200: page(Proof) },
    examples: { query: { status: "sent", quoteId: PROOF_EXAMPLE.quoteId! } },
  },
  getProof: {
    method: "GET",
    path: "/v1/proofs/{proofId}",
    scope: "proofs.read",
    summary: "Read one proof with its current revision and items",
    responses: { 200: Proof },
  },
  updateProof: {
    method: "PATCH",
    path: "/v1/proofs/{proofId}",
    scope: "proofs.write",
    summary: "Change a proof's quote, job, title or recipient",
    body: UpdateProofBody,
    responses: { 200: Proof },
    events: ["proof.updated"],
    examples: {
      responses: {
        200: { ...PROOF_EXAMPLE, recipientEmail: "orders@riversidebakery.com.au" },
      },
    },
  },
  deleteProof: {
    method: "DELETE",
    path: "/v1/proofs/{proofId}",
    scope: "proofs.write",
    summary: "Delete a proof with its revisions and items; one with a recorded customer " +
      "decision is kept as evidence (409)",
    responses: { 200: Deleted },
    events: ["proof.deleted"],
  },
  getProofHistory: {
    method: "GET",
    path: "/v1/proofs/{proofId}/history",
    scope: "proofs.read",
    summary: "One proof with every revision and, per revision, its sends, views, decisions " +
      "and manual status changes in time order",
    responses: { 200: ProofHistory },
  },
  reviseProof: {
    method: "POST",
    path: "/v1/proofs/{proofId}/revise",
    scope: "proofs.write",
    summary: "Open the next revision with its own mocks, images and notes; the proof returns " +
      "to `draft`",
    body: ReviseProofBody,
    responses: { 201: Proof },
    events: ["proof.revised", "proof.status_changed"],
    examples: {
      responses: {
        201: {
          ...DRAFT_EXAMPLE,
          revision: {
            ...REVISION_EXAMPLE,
            id: "0193b1a0-7283-7e94-8fa5-b0c1d2e3f4a5",
            number: 2,
            imageUrls: ["https://files.inkwellprint.com.au/proofs/riverside-colour-card-v2.png"],
            notes: "Logo 10% smaller, as asked",
            createdAt: "2026-11-21T10:02:13.881Z",
          },
          updatedAt: "2026-11-21T10:02:13.881Z",
        },
      },
    },
  },
  setProofStatus: {
    method: "POST",
    path: "/v1/proofs/{proofId}/status",
    scope: "proofs.approve",
    summary: "Set a proof's status directly, any status including `approved`; the history " +
      "records it as a manual change with the credential that made it",
    body: SetProofStatusBody,
    responses: { 200: Proof },
    events: ["proof.status_changed"],
    examples: { responses: { 200: { ...PROOF_EXAMPLE, status: "approved" } } },
  },
  recordClientDecision: {
    method: "POST",
    path: "/v1/proofs/{proofId}/client-decision",
    scope: "proofs.approve",
    summary: "Record the customer's decision on the current revision on their behalf: " +
      "`approve` moves the proof to `approved`, `request_changes` to `changes_requested`",
    body: ClientDecisionBody,
    responses: { 201: ClientDecisionResult },
    events: ["proof.client_decision_recorded", "proof.status_changed"],
  },
});
