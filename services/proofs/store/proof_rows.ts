/**
 * The proofs, their revisions and their items, each table declared once. Reading a proof
 * (proof_reads.ts) joins all three, and the modules that change them (proofs.ts, revisions.ts,
 * item_links.ts) write them, so the declarations live here, apart from any of those.
 */
import { CREDENTIAL_KINDS } from "@printshop/shared/contracts";
import {
  PROOF_STATUSES,
  type ProofRevision,
  type SizeQuantity,
} from "@printshop/shared/contracts/proofs";
import { col, defineTable, enumRank, type RowOf } from "@printshop/shared/db/table";

export const PROOFS = defineTable({
  name: "proofs",
  tenant: true,
  noun: "Proof",
  columns: {
    id: col.uuid(),
    quoteId: col.uuid().nullable().filterable(),
    jobId: col.uuid().nullable().filterable(),
    title: col.text().nullable().filterable(),
    recipientName: col.text().filterable(),
    recipientEmail: col.text().filterable(),
    // In the contract's order (draft first, rejected last), not the alphabet's.
    status: col.enum(PROOF_STATUSES).filterable({
      sortColumn: enumRank(PROOF_STATUSES, "status"),
      sortType: "integer",
    }),
    // Lists filter on it; the proof shows the revision itself in its place (`revision`).
    currentRevision: col.integer().filterable(),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
  },
});

export type ProofRow = RowOf<typeof PROOFS>;

export const REVISIONS = defineTable({
  name: "proof_revisions",
  tenant: true,
  noun: "Proof revision",
  references: { proof_id: "proofs" },
  columns: {
    id: col.uuid(),
    number: col.integer(),
    // Not a column: proof_revision_mocks holds it (REVISION_SELECT).
    mockIds: col.computed<string[]>(),
    imageUrls: col.textArray(),
    notes: col.text().nullable(),
    createdAt: col.timestamp(),
  },
});

/** A revision's columns (alias `r`), its proof and the mocks it shows, in their order. */
export const REVISION_SELECT = `${REVISIONS.selectAs("r")}, r.proof_id, ` +
  "COALESCE((SELECT array_agg(m.mock_id ORDER BY m.position) FROM proof_revision_mocks m " +
  "WHERE m.revision_id = r.id), '{}') AS mock_ids";

export type RevisionRow = RowOf<typeof REVISIONS> & { proof_id: string; mock_ids: string[] };

export function toRevision(row: RevisionRow): ProofRevision {
  return REVISIONS.read(row, { mockIds: row.mock_ids });
}

export const ITEMS = defineTable({
  name: "proof_item_links",
  tenant: true,
  noun: "Proof item link",
  references: { proof_id: "proofs" },
  columns: {
    id: col.uuid(),
    proofId: col.uuid(),
    quoteLineId: col.uuid().nullable(),
    description: col.text(),
    sizes: col.json<SizeQuantity[]>(),
    confirmedSizes: col.json<SizeQuantity[]>().nullable(),
    confirmedAt: col.timestamp().nullable(),
    confirmedByCredentialKind: col.enum(CREDENTIAL_KINDS).nullable(),
    confirmedByCredentialId: col.text().nullable(),
    createdAt: col.timestamp(),
    updatedAt: col.timestamp(),
  },
});

export type ItemRow = RowOf<typeof ITEMS>;
