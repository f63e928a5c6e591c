/**
 * The proof list's search function (migration 0009): each searched column is searched, only the
 * organisation in force is answered, and in a big shop the trigram index is read.
 */
import { assertSearchFunction, serviceHarness } from "@printshop/shared/testing";
import { proofsService } from "./app.ts";

const BIG = 20_000;
const SMALL = 300;
const SHOPS = 30;

Deno.test("search function: proofs by every searched column, one shop's", async () => {
  await using h = await serviceHarness(proofsService);
  const big = crypto.randomUUID();
  const others = Array.from({ length: SHOPS }, () => crypto.randomUUID());
  // Every searched text of proof g is md5('<column>' || g): as varied as real text, and the same
  // in every shop.
  for (const [id, n] of [[big, BIG], ...others.map((o) => [o, SMALL])] as [string, number][]) {
    await h.sql`
      INSERT INTO proofs (id, organization_id, quote_id, title, recipient_name, recipient_email,
        status, created_at, updated_at)
      SELECT gen_random_uuid(), ${id}, gen_random_uuid(), md5('title' || g), md5('name' || g),
        md5('email' || g) || '@example.com', 'draft', now(), now()
      FROM generate_series(1, ${n}::int) g`;
  }
  await h.sql`ANALYZE proofs`;
  const [row] = await h.sql<{ terms: string[] }[]>`
    SELECT ARRAY[left(md5('title123'), 12), left(md5('name123'), 12),
      left(md5('email123'), 12)] AS terms`;
  await assertSearchFunction(h, proofsService.service, { big, other: others[0]! }, {
    fn: "proofs_matching",
    table: "proofs",
    index: "proofs_search",
    terms: row!.terms,
  });
});
