/**
 * Whether an approval link still opens its page, as data about the link and its proof, and what
 * an open link's page shows. Pure.
 */
import type { Proof, ProofHistoryEntry, ShownContent } from "@printshop/shared/contracts/proofs";

/** What the page shows for a link that can still be decided on, or was. */
export interface ApprovalPageData {
  shopName: string;
  sentTo: string;
  expiresAt: Date;
  proof: Proof;
  shown: ShownContent;
  digest: string;
  /** The revision's latest decision, once there is one. */
  decision: ProofHistoryEntry | null;
}

/**
 * - `open`: the page shows the revision (and, once decided, the decision);
 * - `unknown`: no such link (a token signed for another installation's data, say);
 * - `expired`: past its expiry;
 * - `withdrawn`: the shop deleted the proof;
 * - `superseded`: the shop opened a newer revision, which a newer email carries.
 */
export type LinkState = "open" | "unknown" | "expired" | "withdrawn" | "superseded";

/** The state of a link to `revision` expiring at `expiresAt`; `currentRevision` null: deleted. */
export function linkState(
  link: { revision: number; expires_at: Date },
  currentRevision: number | null,
  now: Date,
): LinkState {
  if (link.expires_at.getTime() <= now.getTime()) return "expired";
  if (currentRevision === null) return "withdrawn";
  if (currentRevision > link.revision) return "superseded";
  return "open";
}

/** When a link sent at `sentAt` expires. */
export function linkExpiry(sentAt: Date, days: number): Date {
  return new Date(sentAt.getTime() + days * 24 * 60 * 60 * 1000);
}
