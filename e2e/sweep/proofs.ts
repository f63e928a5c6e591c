/** The route sweep's knowledge of the proofs service (see `sweep.ts`). */
import type { ServiceSweep } from "./sweep.ts";

/** What mocks, proofs and their items name of a quote: the proofs service keeps them as given. */
const PROOF_QUOTE_REFERENCES = {
  quoteId: "a quote, kept by the quotes service",
  quoteGroupId: "a quote group, kept by the quotes service",
  quoteLineId: "a quote line, kept by the quotes service",
};

/** A proof the sweep can send decisions, revisions and deletes at: one image, one item. */
function proofBody(quoteId: string): Record<string, unknown> {
  return {
    quoteId,
    recipientName: "Sweep",
    recipientEmail: "sweep@example.com",
    imageUrls: ["https://files.example.com/sweep.png"],
    items: [{ description: "Sweep" }],
  };
}

export const proofsSweep: ServiceSweep = {
  service: "proofs",
  params: {
    mockId: "mockId",
    proofId: "proofId",
    proofItemLinkId: "proofItemLinkId",
  },
  references: {
    quoteId: "quoteId",
    quoteGroupId: "groupId",
    quoteLineId: "lineId",
    mockIds: "mockId",
    proofIds: "proofId",
  },
  crossService: {
    createMock: PROOF_QUOTE_REFERENCES,
    updateMock: PROOF_QUOTE_REFERENCES,
    createProof: PROOF_QUOTE_REFERENCES,
    updateProof: PROOF_QUOTE_REFERENCES,
    createProofItemLink: PROOF_QUOTE_REFERENCES,
    updateProofItemLink: PROOF_QUOTE_REFERENCES,
  },
  validBodies: {
    createMock: (f) => ({ name: "Sweep", quoteId: f.id("quoteId") }),
    createProof: (f) => proofBody(f.id("quoteId")),
    reviseProof: () => ({ imageUrls: ["https://files.example.com/sweep-2.png"] }),
  },
  async create(client, fixture) {
    const quoteId = fixture.id("quoteId");
    const mockId = await client.create("/v1/mocks", { quoteId, name: "Sweep" });
    const proof = await client.post("/v1/proofs", proofBody(quoteId), 201);
    const { id: proofId, items } = proof as { id: string; items: { id: string }[] };
    return { mockId, proofId, proofItemLinkId: items[0]!.id };
  },
  snapshot: (f) => ({
    mocks: `/v1/mocks?quoteId=${f.id("quoteId")}`,
    proofs: "/v1/proofs?limit=100",
    proofHistory: `/v1/proofs/${f.id("proofId")}/history`,
  }),
};
