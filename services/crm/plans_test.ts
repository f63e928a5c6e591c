/**
 * The plans of the CRM's lists, searches, filters and custom-field look-ups under the row-level
 * policies: each statement a store call sends is captured as sent (text and values), then
 * EXPLAINed as the runtime role with the organisation set, on tables holding many
 * organisations' rows, ANALYZEd. A tenant table read by a Seq Scan, or a list that lost the
 * index it is built on, fails here: operators the planner does not know to be leakproof (`?`,
 * `ILIKE`, `= ANY` on an array) may not be used ahead of the policy, so a plan can quietly
 * lose its index once the policies are on.
 */
import assert from "node:assert/strict";
import type { Sql } from "@printshop/shared/db";
import { withOrganization } from "@printshop/shared/db/tenancy";
import { ApiError } from "@printshop/shared/http";
import {
  assertNoSeqScan,
  type ExplainRow,
  planFor,
  planIn,
  type PlanNode,
  type PlanScope,
  recordingPool,
  scansOf,
  scopedTransaction,
  serviceHarness,
} from "@printshop/shared/testing";
import { crmService } from "./app.ts";
import { bulkSetTier, findCustomer, listCustomers } from "./store/customers.ts";
import { listVendors } from "./store/vendors.ts";
import { listTasks } from "./store/tasks.ts";
import { findExtras } from "./store/task_extras.ts";
import { listDefinitions, updateDefinition } from "./store/custom_fields.ts";
import { deleteDefinition } from "./store/custom_field_removal.ts";

/** The tables seeded with many organisations' rows: none of them may be read by a Seq Scan. */
const SEEDED = [
  "custom_field_definitions",
  "customers",
  "customer_contacts",
  "customer_addresses",
  "vendors",
  "vendor_contacts",
  "tasks",
  "task_checklist_items",
];

/** Organisations beside the one the plans are for, and how many rows each holds per table. */
const OTHERS = 80;
const EACH = 500;
/** The organisation the plans are for: a shop with enough rows that an index is worth it. */
const OURS = 2_000;
/** Shops of one customer and one vendor each. */
const TINY = 20_000;

Deno.test("plans: CRM lists, searches, filters and custom-field look-ups keep their indexes under the policies", async () => {
  await using h = await serviceHarness(crmService);
  const org = crypto.randomUUID();
  const field = { customer: crypto.randomUUID(), vendor: crypto.randomUUID() };
  const taskField = crypto.randomUUID();
  // Removed with force at the end: the batches' statements.
  const stripped = crypto.randomUUID();
  await h.sql`
    INSERT INTO custom_field_definitions (id, organization_id, name, type, entity, options)
    VALUES (${field.customer}, ${org}, 'Region', 'select', 'customer', '{north,south}'),
           (${field.vendor}, ${org}, 'Region', 'select', 'vendor', '{north,south}'),
           (${taskField}, ${org}, 'Region', 'select', 'task', '{north,south}'),
           (${stripped}, ${org}, 'Old code', 'text', 'customer', '{}')`;
  const orgs = await h.sql<{ id: string; n: number }[]>`
    SELECT gen_random_uuid() AS id, ${EACH}::int AS n FROM generate_series(1, ${OTHERS})
    UNION ALL SELECT ${org}::uuid, ${OURS}::int`;
  for (const { id, n } of orgs) {
    // One field id per organisation, as each has its own definitions; one record in 20 holds it.
    const key = id === org ? field.customer : crypto.randomUUID();
    if (id !== org) {
      await h.sql`
        INSERT INTO custom_field_definitions (id, organization_id, name, type, entity)
        SELECT gen_random_uuid(), ${id}, 'Field ' || g,
          'text', (ARRAY['customer', 'vendor', 'task'])[1 + g % 3]
        FROM generate_series(1, 20) g`;
    }
    await h.sql`
      INSERT INTO customers (id, organization_id, company_name, email, tier, tags, sales_rep_email,
                             is_archived, custom_fields, created_at)
      SELECT gen_random_uuid(), ${id}, 'Customer ' || g, 'c' || g || '@example.test',
        (ARRAY['standard', 'silver', 'gold', 'wholesale'])[1 + g % 4], ARRAY['tag' || g % 7],
        'rep' || g % 20 || '@shop.test', g % 10 = 0,
        CASE WHEN g % 20 = 0 THEN jsonb_build_object(${key}::text, 'north') ELSE '{}' END
          || CASE WHEN g % 50 = 0 THEN jsonb_build_object(${stripped}::text, 'x') ELSE '{}' END,
        now() - g * interval '1 minute'
      FROM generate_series(1, ${n}) g`;
    await h.sql`
      INSERT INTO vendors (id, organization_id, name, kind, service_types, archived_at,
                           account_number, custom_fields)
      SELECT gen_random_uuid(), ${id}, 'Vendor ' || g,
        (ARRAY['InventorySupplier', 'Decorator', 'Freight', 'Other'])[1 + g % 4],
        ARRAY[(ARRAY['ScreenPrint', 'Embroidery', 'Transfers'])[1 + g % 3]],
        CASE WHEN g % 10 = 0 THEN now() END, 'A' || g,
        CASE WHEN g % 20 = 0 THEN jsonb_build_object(${
      id === org ? field.vendor : crypto.randomUUID()
    }::text, 'north') ELSE '{}' END
      FROM generate_series(1, ${n}) g`;
  }
  // And many shops with a record or two: the generic plan of `organization_id = $1` then
  // expects an organisation to hold a row or two, which ours (and any large shop) does not.
  await h.sql`
    INSERT INTO customers (id, organization_id, company_name)
    SELECT gen_random_uuid(), gen_random_uuid(), 'Customer ' || g FROM generate_series(1, ${TINY}) g`;
  await h.sql`
    INSERT INTO vendors (id, organization_id, name, kind)
    SELECT gen_random_uuid(), gen_random_uuid(), 'Vendor ' || g, 'Other'
    FROM generate_series(1, ${TINY}) g`;
  await h.sql`
    INSERT INTO customer_contacts (id, organization_id, customer_id, first_name)
    SELECT gen_random_uuid(), organization_id, id, 'Sam' FROM customers`;
  await h.sql`
    INSERT INTO customer_addresses (id, organization_id, customer_id, city)
    SELECT gen_random_uuid(), organization_id, id, 'Sydney' FROM customers`;
  await h.sql`
    INSERT INTO vendor_contacts (id, organization_id, vendor_id, first_name)
    SELECT gen_random_uuid(), organization_id, id, 'Alex' FROM vendors`;
  // A task per customer: one in five about it, one in ten about a quote.
  await h.sql`
    INSERT INTO tasks (id, organization_id, title, status, priority, due_date, assignee_email,
                       quote_id, customer_id, custom_fields, created_at)
    SELECT gen_random_uuid(), c.organization_id, 'Order blanks ' || c.company_name,
      (ARRAY['todo', 'in_progress', 'done', 'cancelled'])[1 + r.g % 4],
      (ARRAY['low', 'normal', 'high', 'urgent'])[1 + r.g % 4],
      current_date + r.g % 60, 'a' || r.g % 10 || '@shop.test',
      CASE WHEN r.g % 10 = 0 THEN gen_random_uuid() END,
      CASE WHEN r.g % 5 = 0 THEN c.id END,
      CASE WHEN r.g % 20 = 0 AND c.organization_id = ${org}
        THEN jsonb_build_object(${taskField}::text, 'north') ELSE '{}' END,
      c.created_at
    FROM (SELECT *, row_number() OVER (ORDER BY id) AS n FROM customers) c,
      LATERAL (SELECT c.n::int AS g) r`;
  const [task] = await h.sql<{ id: string }[]>`
    SELECT id FROM tasks WHERE organization_id = ${org} ORDER BY id LIMIT 1`;
  await h.sql`
    INSERT INTO task_checklist_items (id, organization_id, task_id, text, sort_order)
    SELECT gen_random_uuid(), organization_id, id, 'Check', 1 FROM tasks`;
  await h.sql`ANALYZE`;
  const [customer] = await h.sql<{ id: string }[]>`
    SELECT id FROM customers WHERE organization_id = ${org} ORDER BY id LIMIT 1`;
  const [quote] = await h.sql<{ quote_id: string }[]>`
    SELECT quote_id FROM tasks WHERE organization_id = ${org} AND quote_id IS NOT NULL LIMIT 1`;

  // The runtime role's pool, as the service opens it, recording every statement it sends. One
  // connection, so that what it has prepared (pg_prepared_statements) is what the calls sent.
  const { sql: pool, sent } = recordingPool(h.databaseUrl, crmService.service, { max: 1 });
  const ours: PlanScope = { organizationId: org };
  try {
    /**
     * Runs `call` for the organisation, then EXPLAINs each statement it sent (as sent, then as
     * the generic plan a prepared statement settles on) and answers each plan.
     */
    const plansOf = async (
      call: (sql: Sql) => Promise<unknown>,
    ): Promise<{ text: string; plan: PlanNode }[]> => {
      sent.length = 0;
      await withOrganization(org, () => call(pool)).catch((error) => {
        // A refusal (a 409) is fine: what it sent before it is what is looked at.
        if (!(error instanceof ApiError)) throw error;
      });
      const statements = sent.splice(0).filter((s) => /^\s*(SELECT|WITH|UPDATE)\b/i.test(s.text));
      assert(statements.length > 0, "the call sent statements");
      // A prepared statement runs its generic plan after five calls, if that looks no dearer;
      // one sent unnamed (unsafe()) is planned for its values every time.
      const prepared = new Set(
        (await pool<{ statement: string }[]>`SELECT statement FROM pg_prepared_statements`)
          .map((row) => row.statement),
      );
      const out = [];
      for (const statement of statements) {
        out.push({ text: statement.text, plan: await planFor(pool, ours, statement) });
        if (prepared.has(statement.text)) {
          // The generic plan has no values: sent as a simple query, its $n stay placeholders.
          const explain = `EXPLAIN (FORMAT JSON, GENERIC_PLAN) ${statement.text}`;
          const rows = await scopedTransaction(
            pool,
            ours,
            (tx) => tx.unsafe<ExplainRow[]>(explain).simple(),
          );
          out.push({ text: `[generic] ${statement.text}`, plan: planIn(rows) });
        }
        sent.length = 0;
      }
      return out;
    };

    /**
     * The call's statements read no seeded table by a Seq Scan, and each table in `expected` is
     * read only through one of its indexes. A statement `byIds` names (by its text), prepared,
     * must keep to the indexes given there in its generic plan too: ones that find rows by their
     * ids, never one that reads the whole organisation to find them (planned for its values,
     * the planner knows how large the organisation is; the generic plan guesses).
     */
    const holds = async (
      what: string,
      call: (sql: Sql) => Promise<unknown>,
      expected: Record<string, readonly string[]>,
      byIds: Record<string, { statements: RegExp; indexes: readonly string[] }> = {},
    ): Promise<void> => {
      const plans = await plansOf(call);
      for (const { text, plan } of plans) assertNoSeqScan(plan, SEEDED, `${what}: in\n${text}\n`);
      for (const table of new Set([...Object.keys(expected), ...Object.keys(byIds)])) {
        const used = plans.flatMap(({ text, plan }) =>
          scansOf(plan).filter((s) => s.table === table).map((scan) => ({ text, scan }))
        );
        assert(used.length > 0, `${what}: ${table} is read`);
        for (const { text, scan } of used) {
          const rule = byIds[table];
          const generic = text.startsWith("[generic] ");
          const indexes = generic && rule?.statements.test(text) ? rule.indexes : expected[table];
          if (indexes === undefined) continue;
          assert(
            scan.indexes.length > 0 && scan.indexes.every((index) => indexes.includes(index)),
            `${what}: ${table} read by ${scan.type} ${scan.indexes.join(", ")}, not ` +
              `${indexes.join("/")}, in\n${text}`,
          );
        }
      }
    };

    const page = 50;
    // The btree indexes that lead with organization_id, by table: the policy's own condition
    // and the store's `organization_id = …` both use them.
    // (`…_organization_id_id_key` is the key the composite foreign keys reference.)
    const CUSTOMERS_ORG = ["customers_org", "customers_tier", "customers_organization_id_id_key"];
    const VENDORS_ORG = ["vendors_org_name", "vendors_organization_id_id_key"];
    // By id: the primary key, or the organisation's key that holds the id next to it. Not
    // customers_org, which holds the id too, but after created_at: PostgreSQL 18 skip-scans it,
    // which reads the whole organisation. A generic plan chose it (or customers_tier, reading
    // every one of the organisation's rows) for ids of a large shop among many small ones.
    const CUSTOMERS_BY_ID = ["customers_pkey", "customers_organization_id_id_key"];
    /** The records of a party's `read` (parties.ts) by their ids. */
    const PARTY_READ = /WHERE organization_id = \$1 AND id = ANY\(\$2::uuid\[\]\)\s*$/;
    const TASKS_ORG = [
      "tasks_org",
      "tasks_due",
      "tasks_status",
      "tasks_assignee",
      "tasks_organization_id_id_key",
    ];
    await holds("customers, default order", (sql) => listCustomers(sql, org, {}, page), {
      customers: CUSTOMERS_ORG,
      customer_contacts: ["customer_contacts_customer"],
      customer_addresses: ["customer_addresses_customer"],
    });
    await holds("customers by tier", (sql) => listCustomers(sql, org, { tier: "gold" }, page), {
      customers: CUSTOMERS_ORG,
    });
    await holds(
      "customers, search",
      (sql) => listCustomers(sql, org, { search: "customer 12" }, page),
      // The search function's ids (migration 0006) looked up by key, or the organisation's rows
      // walked in order and kept when their id is among them: the planner's choice by count.
      { customers: [...CUSTOMERS_ORG, ...CUSTOMERS_BY_ID] },
    );
    await holds(
      "customers, filters and sort",
      (sql) =>
        listCustomers(sql, org, {
          filters: JSON.stringify([{ field: "companyName", op: "contains", value: "12" }]),
          sortField: "companyName",
          salesRepEmail: "rep3@shop.test",
        }, page),
      { customers: CUSTOMERS_ORG },
    );
    // Changed by a bulk call: read back by their ids (the target's own statement is
    // shared/db/bulk_target.ts's, held to nothing here but no Seq Scan).
    const some = await h.sql<{ id: string }[]>`
      SELECT id FROM customers WHERE organization_id = ${org} AND tier <> 'gold' LIMIT 200`;
    await holds(
      "customers a bulk change targets by id",
      (sql) =>
        bulkSetTier(sql, org, { target: { ids: some.map((c) => c.id) }, tier: "gold" }, 1000),
      {},
      { customers: { statements: PARTY_READ, indexes: CUSTOMERS_BY_ID } },
    );
    await holds(
      "customers a bulk change targets by filter",
      (sql) =>
        bulkSetTier(sql, org, {
          target: { filters: [{ field: "companyName", op: "contains", value: "none such" }] },
          tier: "gold",
        }, 1000),
      { customers: CUSTOMERS_ORG },
    );
    await holds("a customer", (sql) => findCustomer(sql, org, customer!.id), {
      customers: CUSTOMERS_BY_ID,
      customer_contacts: ["customer_contacts_customer"],
    });

    await holds("vendors, default order", (sql) => listVendors(sql, org, {}, page), {
      vendors: VENDORS_ORG,
      vendor_contacts: ["vendor_contacts_vendor"],
    });
    await holds(
      "vendors by service type and kind, archived too",
      (sql) =>
        listVendors(
          sql,
          org,
          { serviceType: "Embroidery", kind: "Decorator", isActive: false },
          page,
        ),
      { vendors: VENDORS_ORG },
    );
    await holds("vendors, search", (sql) => listVendors(sql, org, { search: "A12" }, page), {
      vendors: [...VENDORS_ORG, "vendors_pkey"],
    });

    await holds("tasks, default order", (sql) => listTasks(sql, org, {}, page), {
      tasks: TASKS_ORG,
    });
    await holds("tasks by status", (sql) => listTasks(sql, org, { status: "todo" }, page), {
      tasks: TASKS_ORG,
    });
    await holds(
      "tasks by assignee, by due date",
      (sql) => listTasks(sql, org, { assigneeEmail: "a3@shop.test", sortField: "dueDate" }, page),
      { tasks: TASKS_ORG },
    );
    await holds(
      "tasks about a customer",
      (sql) => listTasks(sql, org, { customerId: customer!.id }, page),
      { tasks: ["tasks_customer"] },
    );
    await holds(
      "tasks about a quote",
      (sql) => listTasks(sql, org, { quoteId: quote!.quote_id }, page),
      { tasks: ["tasks_quote"] },
    );
    await holds("tasks, search", (sql) => listTasks(sql, org, { search: "blanks 12" }, page), {
      tasks: [...TASKS_ORG, "tasks_pkey"],
    });
    await holds("a task's extras", (sql) => findExtras(sql, org, task!.id), {
      tasks: [...TASKS_ORG, "tasks_pkey"],
      task_checklist_items: ["task_checklist_items_task"],
    });

    await holds("custom field definitions", (sql) => listDefinitions(sql, org, "customer"), {
      custom_field_definitions: ["custom_field_definitions_org"],
    });
    // The look-ups by custom field value: the records holding one (a delete refused while any
    // does), and the options they use (an options change). `?` is not leakproof, so no index on
    // custom_fields can serve them under the policy: the organisation's btree index does.
    const byEntity = { customer: CUSTOMERS_ORG, vendor: VENDORS_ORG, task: TASKS_ORG };
    for (const [entity, id] of Object.entries({ ...field, task: taskField })) {
      const indexes = byEntity[entity as keyof typeof byEntity];
      await holds(
        `${entity}s holding a custom field`,
        (sql) => deleteDefinition(sql, org, id, false, 1000),
        { [`${entity}s`]: indexes, custom_field_definitions: ["custom_field_definitions_pkey"] },
      );
      await holds(
        `options ${entity}s use`,
        (sql) => updateDefinition(sql, org, id, { options: ["north", "south", "east"] }),
        { [`${entity}s`]: indexes },
      );
    }
    // A forced delete: the holders, then each batch (the records by id, with their children).
    await holds(
      "a forced delete's batches",
      (sql) => deleteDefinition(sql, org, stripped, true, 1000),
      {
        customers: [...CUSTOMERS_ORG, ...CUSTOMERS_BY_ID],
        customer_contacts: ["customer_contacts_customer"],
      },
      { customers: { statements: /UPDATE "customers"/, indexes: CUSTOMERS_BY_ID } },
    );
  } finally {
    await pool.end();
  }
});
