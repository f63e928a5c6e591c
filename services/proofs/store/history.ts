/**
 * The history of each revision: sends, failed sends, views, decisions and manual status changes,
 * in time order. An entry that may move the status is written with the move (`recordStep`), in
 * the transaction that makes it; entries are never changed.
 */
import { type Queryable, read } from "@printshop/shared/db";
import { CREDENTIAL_KINDS } from "@printshop/shared/contracts";
import {
  CLIENT_DECISIONS,
  DECISION_CHANNELS,
  type Proof,
  PROOF_ENTRY_KINDS,
  PROOF_STATUSES,
  type ProofEntryKind,
  type ProofHistory,
  type ProofHistoryEntry,
  type ProofStatus,
  type ShownContent,
  type StatusCause,
} from "@printshop/shared/contracts/proofs";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { uuidv7 } from "@printshop/shared/ids";
import type { Caller } from "@printshop/shared/internal-context";
import { writeEvent } from "@printshop/shared/outbox";
import { type ProofRow, PROOFS } from "./proof_rows.ts";
import { findProof } from "./proof_reads.ts";
import { applyStatus, moved } from "./proof_changes.ts";
import { lockShownMocks, revisionId, revisionsOf } from "./revisions.ts";

const HISTORY = defineTable({
  name: "proof_history",
  tenant: true,
  noun: "Proof history entry",
  references: { proof_id: "proofs", revision_id: "proof_revisions" },
  // The entry shows its revision's number (ENTRY_SELECT joins it) after `kind`, and the
  // decision's columns, from `decision` on, together as its `decision` (toEntry).
  columns: {
    id: col.uuid(),
    kind: col.enum(PROOF_ENTRY_KINDS),
    occurredAt: col.timestamp(),
    fromStatus: col.enum(PROOF_STATUSES).nullable(),
    toStatus: col.enum(PROOF_STATUSES).nullable(),
    credentialKind: col.enum(CREDENTIAL_KINDS).nullable(),
    credentialId: col.text().nullable(),
    sentTo: col.text().nullable(),
    ipAddress: col.text().nullable(),
    userAgent: col.text().nullable(),
    note: col.text().nullable(),
    decision: col.enum(CLIENT_DECISIONS).nullable(),
    comment: col.text().nullable(),
    signerName: col.text().nullable(),
    signerEmail: col.text().nullable(),
    channel: col.enum(DECISION_CHANNELS).nullable(),
    wording: col.text().nullable(),
    digest: col.text().nullable(),
    shown: col.json<ShownContent>().nullable(),
  },
});

type EntryRow = RowOf<typeof HISTORY> & { revision: number };

/** An entry's columns (alias `h`) and its revision's number; FROM must join `r` on it. */
const ENTRY_SELECT = `${HISTORY.selectAs("h")}, r.number AS revision`;

function toEntry(row: EntryRow): ProofHistoryEntry {
  const {
    id,
    kind,
    decision,
    comment,
    signerName,
    signerEmail,
    channel,
    wording,
    digest,
    shown,
    ...fields
  } = HISTORY.read(row);
  return {
    id,
    kind,
    revision: row.revision,
    ...fields,
    // A decision entry has every column of its record (the ones a decision always writes).
    decision: decision === null ? null : {
      decision,
      comment,
      signerName: signerName!,
      signerEmail,
      channel: channel!,
      wording: wording!,
      digest: digest!,
      shown: shown!,
    },
  };
}

async function entryById(tx: Queryable, id: string): Promise<ProofHistoryEntry> {
  const [row] = await tx<EntryRow[]>`
    SELECT ${tx.unsafe(ENTRY_SELECT)} FROM proof_history h
    JOIN proof_revisions r ON r.id = h.revision_id WHERE h.id = ${id}`;
  return toEntry(row!);
}

/** What a step of a proof records in its revision's history, and the move it makes. */
export interface Step {
  kind: ProofEntryKind;
  revisionId: string;
  to: ProofStatus;
  cause: StatusCause;
  /** The credential that took it; null for the customer on the approval page. */
  caller: Caller | null;
  /** The entry's own columns: where it was sent, the visitor, a note, the decision. */
  details?: Partial<Record<keyof RowOf<typeof HISTORY>, unknown>>;
}

/**
 * Writes an entry in the history of a locked proof's revision and moves the status with it
 * (`proof.status_changed`); the entry names the move only when there is one. Answers the proof
 * as it now is and the entry.
 */
export async function recordStep(
  tx: Queryable,
  organizationId: string,
  row: ProofRow,
  step: Step,
): Promise<{ proof: Proof; entry: ProofHistoryEntry }> {
  // A send, a decision or an approval fixes what the revision shows: its mocks are held from
  // here to commit, so a change to their images waits and then finds it fixed.
  if (step.kind === "sent" || step.kind === "decision" || step.to === "approved") {
    await lockShownMocks(tx, step.revisionId);
  }
  const moves = step.to !== row.status;
  const id = uuidv7();
  const entry: Record<string, unknown> = {
    id,
    organization_id: organizationId,
    proof_id: row.id,
    revision_id: step.revisionId,
    kind: step.kind,
    from_status: moves ? row.status : null,
    to_status: moves ? step.to : null,
    credential_kind: step.caller?.credentialKind ?? null,
    credential_id: step.caller?.credentialId ?? null,
    ...step.details,
  };
  await tx`INSERT INTO proof_history ${tx(entry)}`;
  const proof = await applyStatus(tx, organizationId, row.id, {
    from: row.status,
    to: step.to,
    cause: step.cause,
    caller: step.caller,
  });
  return { proof, entry: await entryById(tx, id) };
}

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
  const row = await PROOFS.lock(tx, organizationId, id);
  return await recordStep(tx, organizationId, row, {
    kind: "sent",
    revisionId: await revisionId(tx, id, row.current_revision),
    to: moved("send", row.status),
    cause: "sent",
    caller: sent.caller,
    details: { sent_to: sent.sentTo },
  });
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
  const row = await PROOFS.lock(tx, organizationId, id);
  const viewed = await revisionId(tx, id, view.revision);
  const current = view.revision === row.current_revision;
  const result = await recordStep(tx, organizationId, row, {
    kind: "viewed",
    revisionId: viewed,
    to: current ? moved("view", row.status) : row.status,
    cause: "viewed",
    caller: null,
    details: { ip_address: view.ipAddress, user_agent: view.userAgent },
  });
  await writeEvent(tx, { organizationId, type: "proof.viewed", aggregateId: id, payload: result });
  return result;
}

/**
 * Records a failed send in the history of each revision a message carried (`send_failed`, with
 * the mail error as its note), in the order the message carried them.
 */
export async function recordSendFailures(
  tx: Queryable,
  organizationId: string,
  carried: readonly { proofId: string; revisionId: string }[],
  failure: { sentTo: string; error: string },
): Promise<void> {
  if (carried.length === 0) return;
  await tx`
    INSERT INTO proof_history ${
    tx(carried.map((sent) => ({
      id: uuidv7(),
      organization_id: organizationId,
      proof_id: sent.proofId,
      revision_id: sent.revisionId,
      kind: "send_failed",
      sent_to: failure.sentTo,
      note: failure.error,
    })))
  }`;
}

/** A proof with every revision, first to current, each with its entries oldest first. */
export async function proofHistory(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<ProofHistory> {
  // One read for the organisation: the proof (404 when it has none), then its revisions and
  // entries behind it on the same connection.
  const [proof, revisions, rows] = await read(sql, async (q) => {
    const proof = await findProof(q, organizationId, id);
    return [
      proof,
      ...await Promise.all([
        revisionsOf(q, id),
        q<EntryRow[]>`
          SELECT ${q.unsafe(ENTRY_SELECT)} FROM proof_history h
          JOIN proof_revisions r ON r.id = h.revision_id
          WHERE h.proof_id = ${id} ORDER BY h.occurred_at, h.id`,
      ]),
    ] as const;
  });
  const entries = rows.map(toEntry);
  return {
    proof,
    revisions: revisions.map((revision) => ({
      ...revision,
      entries: entries.filter((entry) => entry.revision === revision.number),
    })),
  };
}

/** How many customer decisions a proof's history holds. */
export async function decisionCount(tx: Queryable, proofId: string): Promise<number> {
  const [decided] = await tx<{ count: number }[]>`
    SELECT count(*)::int AS count FROM proof_history
    WHERE proof_id = ${proofId} AND kind = 'decision'`;
  return decided!.count;
}

/** The latest decision on a revision, or null while there is none. */
export async function latestDecision(
  tx: Queryable,
  revisionId: string,
): Promise<ProofHistoryEntry | null> {
  const [decision] = await tx<{ id: string }[]>`
    SELECT id FROM proof_history
    WHERE revision_id = ${revisionId} AND kind = 'decision'
    ORDER BY occurred_at DESC, id DESC LIMIT 1`;
  return decision ? await entryById(tx, decision.id) : null;
}
