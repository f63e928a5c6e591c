/** What the proofs service's tests make over and over: a proof, and its history. */
import type { Proof, ProofHistory } from "@printshop/shared/contracts/proofs";
import { okAs, type ServiceHarness } from "@printshop/shared/testing";
import type { Config } from "./config.ts";

/** A proof for a quote, for Sam at Riverside Bakery; `body` overrides any field. */
export async function createProof(
  h: ServiceHarness<Config>,
  org: string,
  body: Record<string, unknown> = {},
): Promise<Proof> {
  return await okAs<Proof>(h, "POST", "/v1/proofs", org, {
    quoteId: crypto.randomUUID(),
    title: "Staff tees",
    recipientName: "Sam Nguyen",
    recipientEmail: "sam@riversidebakery.com.au",
    imageUrls: ["https://files.example.com/front.png"],
    notes: "Logo as supplied",
    items: [{ description: "Gildan 5000 Black", sizes: [{ size: "M", quantity: 40 }] }],
    ...body,
  });
}

export async function historyOf(
  h: ServiceHarness<Config>,
  org: string,
  id: string,
): Promise<ProofHistory> {
  return await okAs<ProofHistory>(h, "GET", `/v1/proofs/${id}/history`, org);
}
