/**
 * The quote list's search function (migrations 0010 and 0012): each searched column and the client's name
 * are searched, only the organisation in force is answered, and in a big shop the trigram indexes
 * are read.
 */
import {
  assertReadsThrough,
  assertSearchFunction,
  searchPlans,
  serviceHarness,
} from "@printshop/shared/testing";
import { quotesService } from "./app.ts";

const BIG = 20_000;
const SMALL = 300;
const SHOPS = 30;

Deno.test("search function: quotes by every searched column and by the client's name, one shop's", async () => {
  await using h = await serviceHarness(quotesService);
  const big = crypto.randomUUID();
  const others = Array.from({ length: SHOPS }, () => crypto.randomUUID());
  // Every searched text of quote g is md5('<column>' || g): as varied as real text, so no
  // trigram is in every row, and the same in every shop. Its client's id is md5('client' || g).
  for (const [id, n] of [[big, BIG], ...others.map((o) => [o, SMALL])] as [string, number][]) {
    // The clients first: a client's arrival touches its quotes, and there are none yet.
    await h.sql`
      INSERT INTO crm_customers (organization_id, id, name, is_archived, occurred_at, event_id)
      SELECT ${id}, md5('client' || g)::uuid, md5('name' || g), false, now(), gen_random_uuid()
      FROM generate_series(1, ${n}::int) g`;
    await h.sql`
      INSERT INTO quotes (id, organization_id, quote_number, quote_ref, status, reference, notes,
        client_id, total_inc_gst, created_at, updated_at)
      SELECT gen_random_uuid(), ${id}, g, md5('ref' || g), 'draft', md5('reference' || g),
        md5('notes' || g), md5('client' || g)::uuid, 0, now(), now()
      FROM generate_series(1, ${n}::int) g`;
  }
  await h.sql`ANALYZE quotes, crm_customers`;
  const [terms] = await h.sql<{ terms: string[] }[]>`
    SELECT ARRAY[left(md5('ref123'), 12), left(md5('reference123'), 12),
      left(md5('notes123'), 12), right(md5('client123')::uuid::text, 14),
      left(md5('name123'), 12)] AS terms`;
  const schema = quotesService.service;
  await assertSearchFunction(h, schema, { big, other: others[0]! }, {
    fn: "quotes_matching",
    table: "quotes",
    index: "quotes_search",
    others: ["quotes_by_client"],
    terms: terms!.terms,
    walked: false,
  });
  // By the client's name: the projection's index finds the client, the client's quotes follow.
  const byName = terms!.terms[4]!;
  const plans = await searchPlans(h.databaseUrl, schema, big, "quotes_matching", byName);
  assertReadsThrough(plans, "crm_customers", "crm_customers_search", "by the client's name", [
    "crm_customers_pkey",
  ]);
  assertReadsThrough(plans, "quotes", "quotes_by_client", "the client's quotes", ["quotes_search"]);
});
