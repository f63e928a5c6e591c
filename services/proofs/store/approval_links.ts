/**
 * Approval links and the approval page's reads and writes. A send writes one link per proof
 * (`insertApprovalLinks`, in the send's transaction); the page opens a link (`openApprovalLink`:
 * what it shows, and a view recorded on its first opening) and decides through it
 * (`decideThroughLink`: the decision exactly as the API records it, with the page's evidence).
 */
import {
  platformRead,
  type Queryable,
  type Sql,
  transaction,
  withOrganization,
} from "@printshop/shared/db";
import type { ClientDecisionBody } from "@printshop/shared/contracts/proofs";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { shownDigest } from "../domain/evidence.ts";
import { type ApprovalPageData, type LinkState, linkState } from "../domain/approval_link.ts";
import { currentRevisionOf, findProof } from "./proof_reads.ts";
import { currentShowing } from "./revisions.ts";
import { latestDecision, recordProofViewed } from "./history.ts";
import { assertDecision, decide } from "./decisions.ts";

const LINKS = defineTable({
  name: "approval_links",
  tenant: true,
  noun: "Approval link",
  references: { proof_id: "proofs", mail_message_id: "mail_messages" },
  // What opening and deciding through a link read; no resource shows a link's row.
  columns: {
    id: col.uuid(),
    organizationId: col.uuid(),
    proofId: col.uuid(),
    revision: col.integer(),
    sentTo: col.text(),
    shopName: col.text(),
    expiresAt: col.timestamp(),
    firstViewedAt: col.timestamp().nullable(),
  },
});

type LinkRow = RowOf<typeof LINKS>;

/** A link as a send writes it. */
export interface NewApprovalLink {
  id: string;
  proofId: string;
  revision: number;
  expiresAt: Date;
}

/** Writes the links a send's message carries (in the send's transaction, after its message). */
export async function insertApprovalLinks(
  tx: Queryable,
  organizationId: string,
  links: readonly NewApprovalLink[],
  send: { mailMessageId: string; sentTo: string; shopName: string },
): Promise<void> {
  await tx`
    INSERT INTO approval_links ${
    tx(links.map((link) => ({
      id: link.id,
      organization_id: organizationId,
      proof_id: link.proofId,
      revision: link.revision,
      mail_message_id: send.mailMessageId,
      sent_to: send.sentTo,
      shop_name: send.shopName,
      expires_at: link.expiresAt,
    })))
  }`;
}

/** The visitor as the gateway's edge saw them: what a view and a decision keep as evidence. */
export interface Visitor {
  address: string | null;
  userAgent: string | null;
}

/** A link's page: its content, or why there is none (and the shop's name to say it with). */
export type ApprovalPage =
  | { state: "open"; page: ApprovalPageData }
  | { state: Exclude<LinkState, "open">; shopName: string | null };

/**
 * Runs `fn` as work for the organisation of link `id`, in a transaction that holds the link
 * (locked), or answers `unknown()` when there is no such link. A visitor's request names no
 * organisation: the link's id is the capability the customer holds (signed in their token), and
 * the link names its organisation. So the link is first found by id alone, past the policies
 * (platformRead: the one look-up of the page that is across organisations, and it reads only
 * the organisation); everything after runs for that organisation, under its policy.
 */
async function inLinksOrganization<T>(
  sql: Sql,
  id: string,
  unknown: () => T,
  fn: (tx: Queryable, link: LinkRow) => Promise<T>,
): Promise<T> {
  const [found] = await platformRead(
    sql,
    (q) =>
      q<{ organization_id: string }[]>`SELECT organization_id FROM approval_links WHERE id = ${id}`,
  );
  if (!found) return unknown();
  return await withOrganization(found.organization_id, () =>
    transaction(sql, async (tx) => {
      const [link] = await tx<LinkRow[]>`
        SELECT ${tx.unsafe(LINKS.select)} FROM approval_links
        WHERE organization_id = ${found.organization_id} AND id = ${id} FOR UPDATE`;
      // Links are never deleted; kept as a guard all the same.
      return link ? await fn(tx, link) : unknown();
    }));
}

/**
 * The link's state at `now`: its expiry and its proof's current revision decide it. The proof is
 * locked first (`share` to read it, `update` to record on it), so a revision or deletion in
 * flight is waited for and then seen: the state stays as decided here until commit, and a page
 * never shows a revision its link was not sent for (nor a decision goes to a deleted proof).
 */
async function stateOf(
  tx: Queryable,
  link: LinkRow,
  now: Date,
  lock: "share" | "update",
): Promise<LinkState> {
  return linkState(
    link,
    await currentRevisionOf(tx, link.organization_id, link.proof_id, lock),
    now,
  );
}

async function pageData(tx: Queryable, link: LinkRow): Promise<ApprovalPageData> {
  const proof = await findProof(tx, link.organization_id, link.proof_id);
  const shown = await currentShowing(tx, proof);
  return {
    shopName: link.shop_name,
    sentTo: link.sent_to,
    expiresAt: link.expires_at,
    proof,
    shown,
    digest: shownDigest(shown),
    decision: await latestDecision(tx, proof.revision.id),
  };
}

/**
 * Opens a link: null for an unknown id; otherwise its state and, while it can be shown, what it
 * shows. The first opening of a link that can be shown records a view (`proof.viewed`, and the
 * move to `viewed`) unless `recordView` is false (a HEAD, which reads nothing); later openings
 * record nothing.
 */
export async function openApprovalLink(
  sql: Sql,
  linkId: string,
  visitor: Visitor,
  options: { recordView: boolean; now?: Date },
): Promise<ApprovalPage | null> {
  const now = options.now ?? new Date();
  return await inLinksOrganization(sql, linkId, () => null, async (tx, link) => {
    const recordsView = link.first_viewed_at === null && options.recordView;
    const state = await stateOf(tx, link, now, recordsView ? "update" : "share");
    if (state !== "open") return { state, shopName: link.shop_name };
    if (recordsView) {
      await tx`UPDATE approval_links SET first_viewed_at = ${now} WHERE id = ${link.id}`;
      await recordProofViewed(tx, link.organization_id, link.proof_id, {
        revision: link.revision,
        ipAddress: visitor.address,
        userAgent: visitor.userAgent,
      });
    }
    return { state, page: await pageData(tx, link) };
  });
}

/** What the customer posted: the decision fields of the API's body, and what the page showed. */
export type PageDecision = Pick<ClientDecisionBody, "decision" | "comment" | "signerName"> & {
  digest: string;
};

/** What a decision through a link came to: recorded, or the link's state, which is why not. */
export type LinkOutcome =
  | { state: Exclude<LinkState, "open">; shopName: string | null }
  | { state: "decided" };

/**
 * Records the customer's decision through a link, exactly as `client-decision` does, with the
 * link's revision and recipient, the visitor, and the digest the page showed (a proof that
 * changed since is 409, as is one decided already). A link that can no longer be decided on
 * answers its state instead.
 */
export async function decideThroughLink(
  sql: Sql,
  linkId: string,
  decision: PageDecision,
  visitor: Visitor,
  now: Date = new Date(),
): Promise<LinkOutcome> {
  const unknown = (): LinkOutcome => ({ state: "unknown", shopName: null });
  // The link, then its proof, as an opening takes them: the state read is the state decided on
  // (a proof deleted or revised meanwhile is waited for, then said so), in one transaction.
  return await inLinksOrganization<LinkOutcome>(sql, linkId, unknown, async (tx, link) => {
    const state = await stateOf(tx, link, now, "update");
    if (state !== "open") return { state, shopName: link.shop_name };
    assertDecision(decision);
    // Decided meanwhile, or changed since it was shown: a 409 the page explains.
    await decide(tx, link.organization_id, link.proof_id, {
      decision: decision.decision,
      comment: decision.comment,
      signerName: decision.signerName,
      signerEmail: link.sent_to,
      revision: link.revision,
    }, {
      channel: "page",
      ipAddress: visitor.address,
      userAgent: visitor.userAgent,
      digest: decision.digest,
    });
    return { state: "decided" };
  });
}
