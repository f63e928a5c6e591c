/**
 * The two tables that tie rows together (the mocks a revision shows, the proofs a message
 * carries) belong to an organisation like the rows they tie: the database refuses a tie to
 * another organisation's row, and the policies show an organisation only its own ties.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { read, withOrganization } from "@printshop/shared/db";
import { okAs, serviceHarness } from "@printshop/shared/testing";
import type { Mock, Proof } from "@printshop/shared/contracts/proofs";
import { proofsService } from "./app.ts";
import { createProof } from "./test_fixtures.ts";

Deno.test("tenancy: a revision shows, and a message carries, only its own organisation's rows", async () => {
  await using h = await serviceHarness(proofsService);
  const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
  const mockOf = async (org: string): Promise<Mock> =>
    await okAs<Mock>(h, "POST", "/v1/mocks", org, {
      name: "Front",
      quoteId: crypto.randomUUID(),
      images: ["https://files.example.com/front.png"],
    });
  const [mockA, mockB] = [await mockOf(a), await mockOf(b)];
  const proofA: Proof = await createProof(h, a, { mockIds: [mockA.id] });
  const proofB: Proof = await createProof(h, b);
  await okAs(h, "POST", `/v1/proofs/${proofA.id}/send`, a, {});

  // Past the policies (the superuser), the keys still refuse a tie across organisations.
  const refused = async (statement: Promise<unknown>): Promise<string | undefined> =>
    await statement.then(() => undefined, (error: { code?: string }) => error.code);
  assertEquals(
    await refused(h.sql`
      INSERT INTO proof_revision_mocks (organization_id, revision_id, mock_id, position)
      VALUES (${a}, ${proofA.revision.id}, ${mockB.id}, 2)`),
    "23503",
    "A's revision showing B's mock",
  );
  const [message] = await h.sql<{ id: string }[]>`SELECT id FROM mail_messages`;
  assertEquals(
    await refused(h.sql`
      INSERT INTO mail_message_proofs (organization_id, message_id, position, proof_id,
        revision_id)
      VALUES (${a}, ${message!.id}, 2, ${proofB.id}, ${proofB.revision.id})`),
    "23503",
    "A's message carrying B's proof",
  );

  // As the service runs: each organisation sees its own ties, and none without one set.
  const ties = async (): Promise<number[]> =>
    await read(h.deps.sql, async (q) => {
      const [row] = await q<{ mocks: number; carried: number }[]>`
        SELECT (SELECT count(*)::int FROM proof_revision_mocks) AS mocks,
          (SELECT count(*)::int FROM mail_message_proofs) AS carried`;
      return [row!.mocks, row!.carried];
    });
  assertEquals(await withOrganization(a, ties), [1, 1]);
  assertEquals(await withOrganization(b, ties), [0, 0]);
  assertEquals(await ties(), [0, 0]);
  const [forced] = await h.sql<{ forced: boolean }[]>`
    SELECT bool_and(relforcerowsecurity) AS forced FROM pg_class
    WHERE relname IN ('proof_revision_mocks', 'mail_message_proofs')
      AND relnamespace = 'proofs'::regnamespace`;
  assert(forced!.forced, "both tables have their policy forced");
});
