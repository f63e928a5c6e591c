/**
 * Proofs: the proof, its numbered revisions (each with the mocks it shows), its items, and the
 * history of each revision. Every change locks the proof first, so changes to one proof run one
 * after another, and writes its events in the same transaction.
 */
import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import { jsonParam } from "@printshop/shared/db";
import {
  type ClientDecisionBody,
  type ClientDecisionResult,
  type CreateProofBody,
  type CreateProofItemLinkBody,
  DECISION_WORDING,
  type DecisionChannel,
  ListProofsQuery,
  type Proof,
  type PROOF_SORT_FIELDS,
  PROOF_STATUSES,
  type ProofHistory,
  type ProofHistoryEntry,
  type ProofItemLink,
  type ProofRevision,
  type ProofStatus,
  type ReviseProofBody,
  type SetProofStatusBody,
  type ShownContent,
  type SizeQuantity,
  type StatusCause,
  type UpdateProofBody,
} from "@printshop/shared/contracts/proofs";
import { changedColumns, type FieldTable, fieldTable } from "@printshop/shared/db/fields";
import { listSpec, offsetPage } from "@printshop/shared/db/pages";
import { conflict, type ErrorDetail, invalid, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import type { CredentialKind } from "@printshop/shared/internal-context";
import { writeEvent } from "@printshop/shared/outbox";
import {
  decidedRevision,
  decisionProblems,
  ownerProblems,
  repeatedMockProblems,
  revisionContentProblems,
  sizeProblems,
} from "../domain/rules.ts";
import { move, type ProofTrigger } from "../domain/status.ts";
import { shownContent, shownDigest } from "../domain/evidence.ts";

/** Who is calling: the credential a manual change, an API decision or a confirmation names. */
export interface Caller {
  credentialKind: CredentialKind;
  credentialId: string;
}

/** The fields of which a proof names at least one. */
const PROOF_OWNER_FIELDS = ["quoteId", "jobId"] as const;

// ---------------------------------------------------------------------------------------------
// Rows

const PROOF_COLUMNS = "id, quote_id, job_id, title, recipient_name, recipient_email, status, " +
  "current_revision, created_at, updated_at";

export interface ProofRow {
  id: string;
  quote_id: string | null;
  job_id: string | null;
  title: string | null;
  recipient_name: string;
  recipient_email: string;
  status: ProofStatus;
  current_revision: number;
  created_at: Date;
  updated_at: Date;
}

const REVISION_COLUMNS = "r.id, r.proof_id, r.number, r.image_urls, r.notes, r.created_at, " +
  "COALESCE((SELECT array_agg(m.mock_id ORDER BY m.position) FROM proof_revision_mocks m " +
  "WHERE m.revision_id = r.id), '{}') AS mock_ids";

interface RevisionRow {
  id: string;
  proof_id: string;
  number: number;
  image_urls: string[];
  notes: string | null;
  created_at: Date;
  mock_ids: string[];
}

const toRevision = (row: RevisionRow): ProofRevision => ({
  id: row.id,
  number: row.number,
  mockIds: row.mock_ids,
  imageUrls: row.image_urls,
  notes: row.notes,
  createdAt: row.created_at.toISOString(),
});

export const ITEM_COLUMNS = "id, proof_id, quote_line_id, description, sizes, confirmed_sizes, " +
  "confirmed_at, confirmed_by_credential_kind, confirmed_by_credential_id, created_at, updated_at";

export interface ItemRow {
  id: string;
  proof_id: string;
  quote_line_id: string | null;
  description: string;
  sizes: SizeQuantity[];
  confirmed_sizes: SizeQuantity[] | null;
  confirmed_at: Date | null;
  confirmed_by_credential_kind: CredentialKind | null;
  confirmed_by_credential_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const toItem = (row: ItemRow): ProofItemLink => ({
  id: row.id,
  proofId: row.proof_id,
  quoteLineId: row.quote_line_id,
  description: row.description,
  sizes: row.sizes,
  confirmedSizes: row.confirmed_sizes,
  confirmedAt: row.confirmed_at?.toISOString() ?? null,
  confirmedByCredentialKind: row.confirmed_by_credential_kind,
  confirmedByCredentialId: row.confirmed_by_credential_id,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

const ENTRY_COLUMNS = "h.id, h.revision_id, r.number AS revision, h.kind, h.occurred_at, " +
  "h.from_status, h.to_status, h.credential_kind, h.credential_id, h.sent_to, h.ip_address, " +
  "h.user_agent, h.note, h.decision, h.comment, h.signer_name, h.signer_email, h.channel, " +
  "h.wording, h.digest, h.shown";

interface EntryRow {
  id: string;
  revision_id: string;
  revision: number;
  kind: ProofHistoryEntry["kind"];
  occurred_at: Date;
  from_status: ProofStatus | null;
  to_status: ProofStatus | null;
  credential_kind: CredentialKind | null;
  credential_id: string | null;
  sent_to: string | null;
  ip_address: string | null;
  user_agent: string | null;
  note: string | null;
  decision: "approve" | "request_changes" | null;
  comment: string | null;
  signer_name: string | null;
  signer_email: string | null;
  channel: DecisionChannel | null;
  wording: string | null;
  digest: string | null;
  shown: ShownContent | null;
}

const toEntry = (row: EntryRow): ProofHistoryEntry => ({
  id: row.id,
  kind: row.kind,
  revision: row.revision,
  occurredAt: row.occurred_at.toISOString(),
  fromStatus: row.from_status,
  toStatus: row.to_status,
  credentialKind: row.credential_kind,
  credentialId: row.credential_id,
  sentTo: row.sent_to,
  ipAddress: row.ip_address,
  userAgent: row.user_agent,
  note: row.note,
  decision: row.decision === null ? null : {
    decision: row.decision,
    comment: row.comment,
    signerName: row.signer_name!,
    signerEmail: row.signer_email,
    channel: row.channel!,
    wording: row.wording!,
    digest: row.digest!,
    shown: row.shown!,
  },
});

// ---------------------------------------------------------------------------------------------
// Reading

/** Proofs with their current revision and items: three statements whatever the count. */
async function renderProofs(sql: Queryable, rows: readonly ProofRow[]): Promise<Proof[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [revisions, items] = await Promise.all([
    sql<RevisionRow[]>`
      SELECT ${sql.unsafe(REVISION_COLUMNS)} FROM proof_revisions r
      JOIN proofs p ON p.id = r.proof_id AND r.number = p.current_revision
      WHERE r.proof_id = ANY(${ids}::uuid[])`,
    sql<ItemRow[]>`
      SELECT ${sql.unsafe(ITEM_COLUMNS)} FROM proof_item_links
      WHERE proof_id = ANY(${ids}::uuid[]) ORDER BY created_at, id`,
  ]);
  const revisionOf = new Map(revisions.map((r) => [r.proof_id, toRevision(r)]));
  const itemsOf = new Map<string, ProofItemLink[]>();
  for (const item of items) {
    const list = itemsOf.get(item.proof_id) ?? [];
    list.push(toItem(item));
    itemsOf.set(item.proof_id, list);
  }
  return rows.map((row) => ({
    id: row.id,
    quoteId: row.quote_id,
    jobId: row.job_id,
    title: row.title,
    recipientName: row.recipient_name,
    recipientEmail: row.recipient_email,
    status: row.status,
    revision: revisionOf.get(row.id)!,
    items: itemsOf.get(row.id) ?? [],
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }));
}

/** The proof (locked for the rest of the transaction), or 404 when the organisation has none. */
export async function lockProof(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<ProofRow> {
  const [row] = await tx<ProofRow[]>`
    SELECT ${tx.unsafe(PROOF_COLUMNS)} FROM proofs
    WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`;
  if (!row) throw notFound("Proof", id);
  return row;
}

/** The proof as answered, read by its id (already known to be the organisation's). */
export async function proofById(sql: Queryable, id: string): Promise<Proof> {
  const rows = await sql<ProofRow[]>`SELECT ${
    sql.unsafe(PROOF_COLUMNS)
  } FROM proofs WHERE id = ${id}`;
  return (await renderProofs(sql, rows))[0]!;
}

export async function findProof(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<Proof> {
  const rows = await sql<ProofRow[]>`
    SELECT ${sql.unsafe(PROOF_COLUMNS)} FROM proofs
    WHERE organization_id = ${organizationId} AND id = ${id}`;
  if (rows.length === 0) throw notFound("Proof", id);
  return (await renderProofs(sql, rows))[0]!;
}

/** A proof with every revision, first to current, each with its entries oldest first. */
export async function proofHistory(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<ProofHistory> {
  const proof = await findProof(sql, organizationId, id);
  const [revisions, entries] = await Promise.all([
    sql<RevisionRow[]>`
      SELECT ${sql.unsafe(REVISION_COLUMNS)} FROM proof_revisions r
      WHERE r.proof_id = ${id} ORDER BY r.number`,
    sql<EntryRow[]>`
      SELECT ${sql.unsafe(ENTRY_COLUMNS)} FROM proof_history h
      JOIN proof_revisions r ON r.id = h.revision_id
      WHERE h.proof_id = ${id} ORDER BY h.occurred_at, h.id`,
  ]);
  return {
    proof,
    revisions: revisions.map((r) => ({
      ...toRevision(r),
      entries: entries.filter((e) => e.revision_id === r.id).map(toEntry),
    })),
  };
}

/** The proofs' fields: what `filters` may name, and what `sortField` orders on. */
export const PROOF_FIELDS = fieldTable({
  status: {
    type: "enum",
    values: PROOF_STATUSES,
    sortColumn: `array_position(ARRAY[${
      PROOF_STATUSES.map((s) => `'${s}'`).join(", ")
    }]::text[], status)`,
    sortType: "integer",
  },
  title: { type: "text", nullable: true },
  recipientName: { type: "text" },
  recipientEmail: { type: "text" },
  quoteId: { type: "uuid", nullable: true },
  jobId: { type: "uuid", nullable: true },
  currentRevision: { type: "integer" },
  createdAt: { type: "datetime" },
  updatedAt: { type: "datetime" },
}) satisfies FieldTable<typeof PROOF_SORT_FIELDS[number]>;

const PROOF_LIST = listSpec(ListProofsQuery, {
  from: "proofs",
  select: PROOF_COLUMNS,
  fields: PROOF_FIELDS,
  search: ["title", "recipient_name", "recipient_email"],
  order: { field: "createdAt", direction: "desc" },
});

export async function listProofs(
  sql: Queryable,
  organizationId: string,
  query: ListProofsQuery,
  pageSizeMax: number,
): Promise<{ items: Proof[]; totalCount: number }> {
  return await offsetPage(
    sql,
    PROOF_LIST,
    { where: sql`organization_id = ${organizationId}`, query, pageSizeMax },
    (rows: ProofRow[]) => renderProofs(sql, rows),
  );
}

// ---------------------------------------------------------------------------------------------
// Revisions and items

/**
 * Refuses (400, naming each `mockIds.N`) a mock the organisation does not have: an unknown id
 * and another organisation's look the same. The mocks found are key-share locked, so they
 * cannot be deleted before this transaction links them.
 */
async function assertMocks(
  tx: Queryable,
  organizationId: string,
  mockIds: readonly string[],
): Promise<void> {
  const problems: ErrorDetail[] = repeatedMockProblems(mockIds);
  if (mockIds.length > 0) {
    const found = await tx<{ id: string }[]>`
      SELECT id FROM mocks WHERE organization_id = ${organizationId}
        AND id = ANY(${[...mockIds]}::uuid[])
      FOR KEY SHARE`;
    const known = new Set(found.map((r) => r.id));
    mockIds.forEach((id, i) => {
      if (!known.has(id)) {
        problems.push({
          path: `mockIds.${i}`,
          message: `Mock "${id}" was not found in this organisation; give one of its mocks`,
        });
      }
    });
  }
  if (problems.length > 0) throw invalid("proof revision", problems);
}

/** Opens revision `number` of a proof with what it shows; checked before anything is written. */
async function insertRevision(
  tx: Queryable,
  organizationId: string,
  proofId: string,
  number: number,
  input: ReviseProofBody,
): Promise<void> {
  const mockIds = input.mockIds ?? [];
  const imageUrls = input.imageUrls ?? [];
  const empty = revisionContentProblems(mockIds, imageUrls);
  if (empty.length > 0) throw invalid("proof revision", empty);
  await assertMocks(tx, organizationId, mockIds);
  const id = uuidv7();
  await tx`
    INSERT INTO proof_revisions ${
    tx({
      id,
      organization_id: organizationId,
      proof_id: proofId,
      number,
      image_urls: imageUrls,
      notes: input.notes ?? null,
    })
  }`;
  if (mockIds.length > 0) {
    await tx`
      INSERT INTO proof_revision_mocks ${
      tx(mockIds.map((mockId, i) => ({ revision_id: id, mock_id: mockId, position: i + 1 })))
    }`;
  }
}

/** Checks an item's sizes (400 naming `<path>.N.size`). */
export function assertSizes(sizes: readonly SizeQuantity[] | undefined, path: string): void {
  const problems = sizeProblems(sizes ?? [], path);
  if (problems.length > 0) throw invalid("proof item", problems);
}

/** Adds an item to a proof (checked by the caller). */
export async function insertItem(
  tx: Queryable,
  organizationId: string,
  proofId: string,
  input: CreateProofItemLinkBody,
): Promise<ItemRow> {
  const [row] = await tx<ItemRow[]>`
    INSERT INTO proof_item_links ${
    tx({
      id: uuidv7(),
      organization_id: organizationId,
      proof_id: proofId,
      quote_line_id: input.quoteLineId ?? null,
      description: input.description,
      sizes: jsonParam(tx, input.sizes ?? []),
    })
  }
    RETURNING ${tx.unsafe(ITEM_COLUMNS)}`;
  return row!;
}

/** Records a proof change of its own fields or items: `proof.updated` with the whole proof. */
export async function touchProof(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<Proof> {
  await tx`UPDATE proofs SET updated_at = now() WHERE id = ${id}`;
  const proof = await proofById(tx, id);
  await writeEvent(tx, { organizationId, type: "proof.updated", aggregateId: id, payload: proof });
  return proof;
}

// ---------------------------------------------------------------------------------------------
// Writing

export async function createProof(
  sql: Sql,
  organizationId: string,
  input: CreateProofBody,
): Promise<Proof> {
  const problems = ownerProblems(input, PROOF_OWNER_FIELDS, "A proof");
  (input.items ?? []).forEach((item, i) =>
    problems.push(...sizeProblems(item.sizes ?? [], `items.${i}.sizes`))
  );
  if (problems.length > 0) throw invalid("proof", problems);
  return await transaction(sql, async (tx) => {
    const id = uuidv7();
    await tx`
      INSERT INTO proofs ${
      tx({
        id,
        organization_id: organizationId,
        ...changedColumns(input, ["mockIds", "imageUrls", "notes", "items"]),
      })
    }`;
    await insertRevision(tx, organizationId, id, 1, input);
    for (const item of input.items ?? []) await insertItem(tx, organizationId, id, item);
    const proof = await proofById(tx, id);
    await writeEvent(tx, {
      organizationId,
      type: "proof.created",
      aggregateId: id,
      payload: proof,
    });
    return proof;
  });
}

export async function updateProof(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateProofBody,
): Promise<Proof> {
  return await transaction(sql, async (tx) => {
    const current = await lockProof(tx, organizationId, id);
    const merged = { quoteId: current.quote_id, jobId: current.job_id, ...input };
    const problems = ownerProblems(merged, PROOF_OWNER_FIELDS, "A proof");
    if (problems.length > 0) throw invalid("proof", problems);
    const changes = changedColumns(input);
    if (Object.keys(changes).length === 0) return await proofById(tx, id);
    await tx`UPDATE proofs SET ${tx(changes)} WHERE id = ${id}`;
    return await touchProof(tx, organizationId, id);
  });
}

/**
 * Deletes a proof with its revisions, items and history. A proof a customer has decided on is
 * kept (409): its history is the evidence of what they agreed to.
 */
export async function deleteProof(sql: Sql, organizationId: string, id: string): Promise<Proof> {
  return await transaction(sql, async (tx) => {
    await lockProof(tx, organizationId, id);
    const [decided] = await tx<{ count: number }[]>`
      SELECT count(*)::int AS count FROM proof_history
      WHERE proof_id = ${id} AND kind = 'decision'`;
    if (decided!.count > 0) {
      throw conflict(
        `Proof "${id}" holds ${decided!.count} recorded customer decision` +
          `${decided!.count === 1 ? "" : "s"}, kept as evidence; it cannot be deleted`,
      );
    }
    const proof = await proofById(tx, id);
    await tx`DELETE FROM proofs WHERE id = ${id}`;
    await writeEvent(tx, {
      organizationId,
      type: "proof.deleted",
      aggregateId: id,
      payload: proof,
    });
    return proof;
  });
}

/** The id of a proof's revision `number`. */
async function revisionId(tx: Queryable, proofId: string, number: number): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
    SELECT id FROM proof_revisions WHERE proof_id = ${proofId} AND number = ${number}`;
  return row!.id;
}

interface StatusMove {
  from: ProofStatus;
  to: ProofStatus;
  cause: StatusCause;
  caller: Caller | null;
}

/**
 * Sets the status (when it moves) and writes `proof.status_changed`; answers the proof as it
 * now is either way.
 */
async function applyStatus(
  tx: Queryable,
  organizationId: string,
  row: ProofRow,
  { from, to, cause, caller }: StatusMove,
): Promise<Proof> {
  if (from === to) return await proofById(tx, row.id);
  await tx`UPDATE proofs SET status = ${to}, updated_at = now() WHERE id = ${row.id}`;
  const proof = await proofById(tx, row.id);
  await writeEvent(tx, {
    organizationId,
    type: "proof.status_changed",
    aggregateId: row.id,
    payload: {
      proof,
      fromStatus: from,
      toStatus: to,
      cause,
      revision: proof.revision.number,
      credentialKind: caller?.credentialKind ?? null,
      credentialId: caller?.credentialId ?? null,
    },
  });
  return proof;
}

/** The status a trigger moves a proof to, or 409 saying why not. */
function moved(trigger: ProofTrigger, from: ProofStatus): ProofStatus {
  const result = move(trigger, from);
  if ("refused" in result) throw conflict(result.refused);
  return result.to;
}

/** Opens the next revision; the proof returns to `draft`. */
export async function reviseProof(
  sql: Sql,
  organizationId: string,
  id: string,
  input: ReviseProofBody,
  caller: Caller,
): Promise<Proof> {
  return await transaction(sql, async (tx) => {
    const row = await lockProof(tx, organizationId, id);
    const number = row.current_revision + 1;
    await insertRevision(tx, organizationId, id, number, input);
    await tx`UPDATE proofs SET current_revision = ${number}, updated_at = now() WHERE id = ${id}`;
    const revised = await proofById(tx, id);
    await writeEvent(tx, {
      organizationId,
      type: "proof.revised",
      aggregateId: id,
      payload: revised,
    });
    const to = moved("revise", row.status);
    return await applyStatus(tx, organizationId, row, {
      from: row.status,
      to,
      cause: "revised",
      caller,
    });
  });
}

/**
 * Sets any status directly (spec 3), recorded in the current revision's history as a manual
 * change with the credential that made it. Setting the status the proof is in changes nothing.
 */
export async function setProofStatus(
  sql: Sql,
  organizationId: string,
  id: string,
  input: SetProofStatusBody,
  caller: Caller,
): Promise<{ proof: Proof; changed: boolean }> {
  return await transaction(sql, async (tx) => {
    const row = await lockProof(tx, organizationId, id);
    if (row.status === input.status) return { proof: await proofById(tx, id), changed: false };
    await tx`
      INSERT INTO proof_history ${
      tx({
        id: uuidv7(),
        organization_id: organizationId,
        proof_id: id,
        revision_id: await revisionId(tx, id, row.current_revision),
        kind: "status_changed",
        from_status: row.status,
        to_status: input.status,
        credential_kind: caller.credentialKind,
        credential_id: caller.credentialId,
        note: input.note ?? null,
      })
    }`;
    const proof = await applyStatus(tx, organizationId, row, {
      from: row.status,
      to: input.status,
      cause: "manual",
      caller,
    });
    return { proof, changed: true };
  });
}

/** What the current revision of a proof shows now: its images in order and its items. */
/** What `proof`'s current revision shows: the content a decision's digest is taken of. */
export async function currentShowing(tx: Queryable, proof: Proof): Promise<ShownContent> {
  const mocks = await tx<{ images: string[] }[]>`
    SELECT k.images FROM proof_revision_mocks m JOIN mocks k ON k.id = m.mock_id
    WHERE m.revision_id = ${proof.revision.id} ORDER BY m.position`;
  return shownContent({
    proofId: proof.id,
    revision: proof.revision.number,
    title: proof.title,
    notes: proof.revision.notes,
    mockImages: mocks.map((m) => m.images),
    imageUrls: proof.revision.imageUrls,
    items: proof.items,
  });
}

/** How a decision reached the service, with what each channel knows of who made it. */
export type DecisionSource =
  | { channel: "api"; caller: Caller }
  | {
    channel: "page";
    ipAddress: string | null;
    userAgent: string | null;
    /** The digest of what the page showed: a decision counts only for that content (409). */
    digest: string;
  };

/**
 * Records a customer's decision on the current revision and moves the status (`approved`,
 * `changes_requested`). Kept as evidence: the revision, exactly what it showed and its digest,
 * the signer, the time, the words agreed to and the channel. Naming a superseded revision is a
 * 409; a proof already decided is a 409 too (revise it, or set the status directly). The
 * approval page calls this with `channel: "page"`.
 */
export async function recordClientDecision(
  sql: Sql,
  organizationId: string,
  id: string,
  input: ClientDecisionBody,
  source: DecisionSource,
): Promise<ClientDecisionResult> {
  const problems = decisionProblems(input.decision, input.comment);
  if (problems.length > 0) throw invalid("decision", problems);
  return await transaction(sql, async (tx) => {
    const row = await lockProof(tx, organizationId, id);
    const decided = decidedRevision(input.revision, row.current_revision);
    if ("superseded" in decided) throw conflict(decided.superseded);
    if ("problem" in decided) throw invalid("decision", [decided.problem]);
    const to = moved(input.decision, row.status);
    const before = await proofById(tx, id);
    const shown = await currentShowing(tx, before);
    const digest = shownDigest(shown);
    if (source.channel === "page" && source.digest !== digest) {
      throw conflict(
        "The proof changed after the page showed it; the decision was not recorded. Review " +
          "it again",
      );
    }
    const caller = source.channel === "api" ? source.caller : null;
    const entryId = uuidv7();
    await tx`
      INSERT INTO proof_history ${
      tx({
        id: entryId,
        organization_id: organizationId,
        proof_id: id,
        revision_id: before.revision.id,
        kind: "decision",
        from_status: row.status,
        to_status: to,
        credential_kind: caller?.credentialKind ?? null,
        credential_id: caller?.credentialId ?? null,
        ip_address: source.channel === "page" ? source.ipAddress : null,
        user_agent: source.channel === "page" ? source.userAgent : null,
        decision: input.decision,
        comment: input.comment ?? null,
        signer_name: input.signerName,
        signer_email: input.signerEmail ?? null,
        channel: source.channel,
        wording: DECISION_WORDING[input.decision],
        digest,
        shown: jsonParam(tx, shown),
      })
    }`;
    const proof = await applyStatus(tx, organizationId, row, {
      from: row.status,
      to,
      cause: "client_decision",
      caller,
    });
    const entry = await entryById(tx, entryId);
    const result = { proof, entry };
    await writeEvent(tx, {
      organizationId,
      type: "proof.client_decision_recorded",
      aggregateId: id,
      payload: result,
    });
    return result;
  });
}

/** One history entry, as the history shows it. */
export async function entryById(tx: Queryable, id: string): Promise<ProofHistoryEntry> {
  const [row] = await tx<EntryRow[]>`
    SELECT ${tx.unsafe(ENTRY_COLUMNS)} FROM proof_history h
    JOIN proof_revisions r ON r.id = h.revision_id WHERE h.id = ${id}`;
  return toEntry(row!);
}

// ---------------------------------------------------------------------------------------------
// Sends and views: steps of the send (store/mail.ts) and the approval page (store/approval.ts)

/**
 * Records that the current revision was sent to `sentTo` and moves a draft to `sent` (a resend
 * while the customer has not decided keeps the status; a decided proof is 409: revise it
 * first). Runs inside the caller's transaction (the send's), which it must be given; it locks
 * the proof. `proof.status_changed` (cause `sent`) is written when the status moves.
 */
export async function recordProofSent(
  tx: Queryable,
  organizationId: string,
  id: string,
  sent: { sentTo: string; caller: Caller | null },
): Promise<{ proof: Proof; entry: ProofHistoryEntry }> {
  const row = await lockProof(tx, organizationId, id);
  const to = moved("send", row.status);
  const entryId = uuidv7();
  await tx`
    INSERT INTO proof_history ${
    tx({
      id: entryId,
      organization_id: organizationId,
      proof_id: id,
      revision_id: await revisionId(tx, id, row.current_revision),
      kind: "sent",
      from_status: row.status === to ? null : row.status,
      to_status: row.status === to ? null : to,
      credential_kind: sent.caller?.credentialKind ?? null,
      credential_id: sent.caller?.credentialId ?? null,
      sent_to: sent.sentTo,
    })
  }`;
  const proof = await applyStatus(tx, organizationId, row, {
    from: row.status,
    to,
    cause: "sent",
    caller: sent.caller,
  });
  return { proof, entry: await entryById(tx, entryId) };
}

/**
 * Records that the customer opened revision `revision` (the one their link is bound to) and,
 * when it is the current revision of a sent proof, moves it to `viewed`. A superseded
 * revision's view is recorded in that revision's history and moves nothing. Writes
 * `proof.viewed`. Runs inside the caller's transaction; 404 for a revision the proof does not
 * have.
 */
export async function recordProofViewed(
  tx: Queryable,
  organizationId: string,
  id: string,
  view: { revision: number; ipAddress: string | null; userAgent: string | null },
): Promise<{ proof: Proof; entry: ProofHistoryEntry }> {
  const row = await lockProof(tx, organizationId, id);
  const [revision] = await tx<{ id: string }[]>`
    SELECT id FROM proof_revisions WHERE proof_id = ${id} AND number = ${view.revision}`;
  if (!revision) throw notFound("Proof revision", `${id}#${view.revision}`);
  const current = view.revision === row.current_revision;
  const to = current ? moved("view", row.status) : row.status;
  const entryId = uuidv7();
  await tx`
    INSERT INTO proof_history ${
    tx({
      id: entryId,
      organization_id: organizationId,
      proof_id: id,
      revision_id: revision.id,
      kind: "viewed",
      from_status: row.status === to ? null : row.status,
      to_status: row.status === to ? null : to,
      ip_address: view.ipAddress,
      user_agent: view.userAgent,
    })
  }`;
  const proof = await applyStatus(tx, organizationId, row, {
    from: row.status,
    to,
    cause: "viewed",
    caller: null,
  });
  const result = { proof, entry: await entryById(tx, entryId) };
  await writeEvent(tx, { organizationId, type: "proof.viewed", aggregateId: id, payload: result });
  return result;
}
