/**
 * The main reads keep their indexes under the row-level policies. Twenty organisations' proofs,
 * revisions, items, history, mocks, mail and links are seeded (one organisation is a twentieth
 * of each table, so an index is worth it) and ANALYZEd; then the store's own functions run as
 * the runtime role (printshop_app) for one organisation, each statement they send is captured
 * with its parameters, and each is EXPLAINed again as that role, for that organisation (or as the
 * platform, for the two reads that are across organisations). No plan may scan a seeded table
 * whole: a non-leakproof operator (ILIKE, say) the policy keeps from an index would show here as
 * a Seq Scan.
 */
import assert from "node:assert/strict";
import { transaction, withOrganization } from "@printshop/shared/db";
import { ListProofsQuery } from "@printshop/shared/contracts/proofs";
import {
  outline,
  planFor,
  type PlanNode,
  recordingPool,
  type Sent,
  seqScansOf,
  type ServiceHarness,
  serviceHarness,
} from "@printshop/shared/testing";
import type { Config } from "./config.ts";
import { proofsService } from "./app.ts";
import { listProofs } from "./store/proofs.ts";
import { listMocks } from "./store/mocks.ts";
import { proofHistory } from "./store/history.ts";
import { findProof } from "./store/proof_reads.ts";
import { assertShownMayChange, revisionsShowingMock } from "./store/revisions.ts";
import { PROOFS } from "./store/proof_rows.ts";
import { claimDueMail, listOutbox } from "./store/mail.ts";
import { openApprovalLink } from "./store/approval_links.ts";

const ORGANIZATIONS = 20;
const PER_ORGANIZATION = 500;

/** The seeded tables: none may be scanned whole. */
const SEEDED = new Set([
  "proofs",
  "proof_revisions",
  "proof_revision_mocks",
  "proof_item_links",
  "proof_history",
  "mocks",
  "mail_messages",
  "mail_message_proofs",
  "approval_links",
]);

/** SQL for a version 4 UUID made of `text` (the same text, the same id: ten proofs a quote). */
const uuidOf = (text: string): string =>
  `overlay(overlay(md5(${text}) placing '4' from 13) placing '8' from 17)::uuid`;

/** Seeds every table, as the superuser (past the policies); `org` is organisation 1. */
async function seed(h: ServiceHarness<Config>, org: string): Promise<void> {
  // Several statements in one message (the simple protocol): the id is inlined, a UUID made here.
  assert(/^[0-9a-f-]{36}$/.test(org));
  await h.sql.unsafe(`
    CREATE TABLE seed AS
    SELECT o, n,
      CASE WHEN o = 1 THEN '${org}'::uuid ELSE ${uuidOf("'org' || o")} END AS org,
      gen_random_uuid() AS proof, gen_random_uuid() AS rev, gen_random_uuid() AS mock,
      gen_random_uuid() AS msg, gen_random_uuid() AS link,
      ${uuidOf("'quote' || o || '-' || n / 10")} AS quote,
      ${uuidOf("'group' || o || '-' || n / 10")} AS quote_group,
      ${uuidOf("'job' || o || '-' || n / 10")} AS job,
      (ARRAY['draft', 'sent', 'viewed', 'approved', 'changes_requested', 'rejected'])[n % 6 + 1]
        AS status,
      now() - n * interval '1 minute' AS at
    FROM generate_series(1, ${ORGANIZATIONS}) o, generate_series(1, ${PER_ORGANIZATION}) n;
    INSERT INTO mocks (id, organization_id, quote_id, quote_group_id, job_id, name, images,
      created_at)
    SELECT mock, org, quote, quote_group, job, 'Front ' || n,
      ARRAY['https://files.example.com/' || n || '.png'], at FROM seed;
    INSERT INTO proofs (id, organization_id, quote_id, job_id, title, recipient_name,
      recipient_email, status, created_at, updated_at)
    SELECT proof, org, quote, job, 'Staff tees ' || n, 'Customer ' || n % 50,
      'r' || n % 50 || '@example.com', status, at, at FROM seed;
    INSERT INTO proof_revisions (id, organization_id, proof_id, number, image_urls, created_at)
    SELECT rev, org, proof, 1, ARRAY['https://files.example.com/p' || n || '.png'], at FROM seed;
    INSERT INTO proof_revision_mocks (organization_id, revision_id, mock_id, position)
    SELECT org, rev, mock, 1 FROM seed;
    INSERT INTO proof_item_links (id, organization_id, proof_id, description, sizes, created_at)
    SELECT gen_random_uuid(), org, proof, 'Gildan 5000 #' || n,
      '[{"size": "M", "quantity": 40}]'::jsonb, at FROM seed;
    INSERT INTO proof_history (id, organization_id, proof_id, revision_id, kind, occurred_at,
      sent_to, decision, channel, signer_name, wording, digest, shown)
    SELECT gen_random_uuid(), org, proof, rev, kind, at + k * interval '1 second',
      'r@example.com',
      CASE WHEN kind = 'decision' THEN 'approve' END,
      CASE WHEN kind = 'decision' THEN 'api' END,
      CASE WHEN kind = 'decision' THEN 'Sam' END,
      CASE WHEN kind = 'decision' THEN 'I approve' END,
      CASE WHEN kind = 'decision' THEN repeat('0', 64) END,
      CASE WHEN kind = 'decision' THEN '{}'::jsonb END
    FROM seed, LATERAL (VALUES (1, 'sent'), (2, 'viewed'), (3, 'decision')) e(k, kind)
    WHERE kind <> 'decision' OR n % 3 = 0;
    INSERT INTO mail_messages (id, organization_id, to_address, subject, text_body, html_body,
      status, next_attempt_at, created_at)
    SELECT msg, org, 'r@example.com', 'Proof', 'text', '<p>html</p>',
      CASE WHEN n % 100 = 0 THEN 'pending' ELSE 'sent' END, at, at FROM seed;
    INSERT INTO mail_message_proofs (organization_id, message_id, position, proof_id, revision_id)
    SELECT org, msg, 1, proof, rev FROM seed;
    INSERT INTO approval_links (id, organization_id, proof_id, revision, mail_message_id, sent_to,
      shop_name, created_at, expires_at)
    SELECT link, org, proof, 1, msg, 'r@example.com', 'Inkwell', at, now() + interval '30 days'
    FROM seed;
    ANALYZE;
  `).simple();
}

Deno.test("plans: every list, search, filter and look-up keeps its index under the policies", async () => {
  await using h = await serviceHarness(proofsService);
  const org = crypto.randomUUID();
  await seed(h, org);
  const [sample] = await h.sql<
    { proof: string; quote: string; job: string; quote_group: string; mock: string; link: string }[]
  >`SELECT proof, quote, job, quote_group, mock, link FROM seed WHERE o = 1 AND n = 300`;
  const s = sample!;

  // The store's functions on a pool of the runtime role whose every statement is kept, with the
  // parameters it was sent with.
  const { sql: app, sent } = recordingPool(h.databaseUrl, proofsService.service, { max: 2 });
  try {
    /** Runs `work` and answers each statement it sent that reads or changes rows. */
    const statementsOf = async (work: () => Promise<unknown>): Promise<Sent[]> => {
      sent.length = 0;
      await work();
      // The driver's own look-up of array types is the catalogue's, not the store's.
      return sent.splice(0).filter((s) =>
        /^\s*(SELECT|WITH|UPDATE|DELETE)\b/i.test(s.text) && !s.text.includes("pg_catalog.")
      );
    };
    const forOrganization = await statementsOf(() =>
      withOrganization(org, async () => {
        const lists: Record<string, string>[] = [
          {},
          { status: "sent" },
          { quoteId: s.quote },
          { jobId: s.job },
          { recipientEmail: "r7@example.com" },
          { search: "tees 30" },
          { sortField: "status", sortDirection: "desc" },
          { sortField: "title" },
        ];
        for (const query of lists) {
          const { items } = await listProofs(app, org, ListProofsQuery.parse(query), 100);
          assert(items.length > 0, `${JSON.stringify(query)} finds the organisation's proofs`);
        }
        for (
          const query of [{ quoteId: s.quote }, { jobId: s.job }, { quoteGroupId: s.quote_group }]
        ) {
          assert((await listMocks(app, org, query, 100)).items.length > 0);
        }
        await findProof(app, org, s.proof);
        await proofHistory(app, org, s.proof);
        await transaction(app, async (tx) => {
          await revisionsShowingMock(tx, s.mock);
          // The fixity a change of the title or the items checks (a sent revision: 409).
          await assertShownMayChange(tx, await PROOFS.lock(tx, org, s.proof), "its title")
            .catch(() => {});
        });
      })
    );
    // The page's look-up by the link's id is the platform's; the rest is the link's organisation.
    const page = await statementsOf(() =>
      openApprovalLink(app, s.link, { address: null, userAgent: null }, { recordView: false })
    );
    const forPlatform = await statementsOf(async () => {
      await claimDueMail(app, 8, 60_000);
      await listOutbox(app, 100);
    });

    const platformTexts = new Set(forPlatform.map((s) => s.text));
    const plans: [string, PlanNode][] = [];
    for (const statement of [...forOrganization, ...page]) {
      const platform = /FROM approval_links WHERE id = \$1\s*$/.test(statement.text);
      const scope = platform ? { platform: true } as const : { organizationId: org };
      plans.push([statement.text, await planFor(app, scope, statement)]);
    }
    for (const statement of forPlatform) {
      plans.push([statement.text, await planFor(app, { platform: true }, statement)]);
    }
    assert(platformTexts.size === 2, "the claim and the outbox were seen");
    assert(plans.length > 20, `every statement was seen (${plans.length})`);
    const whole = plans.flatMap(([text, plan]) =>
      seqScansOf(plan, SEEDED).map((scan) =>
        `Seq Scan on ${scan["Relation Name"]}\n  in ${text.replace(/\s+/g, " ").slice(0, 300)}`
      )
    );
    if (Deno.env.get("PLANS_SHOW")) {
      for (const [text, plan] of plans) {
        console.log(outline(plan), text.replace(/\s+/g, " ").slice(0, 700));
      }
    }
    assert(whole.length === 0, `tables scanned whole:\n${whole.join("\n")}`);
  } finally {
    await app.end();
  }
});
