/**
 * The proofs service's contract: every operation it serves and every event it emits. A new
 * resource is a file beside these, listed once below.
 */
import { serviceContract } from "../operation.ts";
import { mockEvents, mockOperations } from "./mocks.ts";
import { proofEvents, proofOperations } from "./proofs.ts";
import { proofItemLinkEvents, proofItemLinkOperations } from "./item_links.ts";
import { mailEvents, mailOperations } from "./mail.ts";
import { approvalEvents, approvalPages } from "./approval.ts";

export * from "./values.ts";
export * from "./mocks.ts";
export * from "./proofs.ts";
export * from "./item_links.ts";
export * from "./mail.ts";
export * from "./approval.ts";

export const proofsEvents = {
  ...mockEvents,
  ...proofEvents,
  ...proofItemLinkEvents,
  ...mailEvents,
  ...approvalEvents,
};

/** The tags its resources' operations are listed under, and what each tag's operations do. */
const proofsTags = {
  Mocks: "Artwork placed on a garment for a quote, a quote group or a job, which proofs show",
  Proofs: "What a customer is asked to approve: numbered revisions, items with their sizes, " +
    "the customer's decisions recorded as evidence, and the history of each revision",
};

export const proofsContract = serviceContract("proofs", {
  ...mockOperations,
  ...proofOperations,
  ...proofItemLinkOperations,
  ...mailOperations,
}, { tags: proofsTags, pages: approvalPages });
