/**
 * The quotes service's copy of the CRM's customers (crm_customers, migration 0003), kept from the
 * CRM's `customer.*` events by the consumer (consumer.ts). Quotes read a client's name from here;
 * the crm schema is never read.
 */
import { oneStatement, type Sql } from "@printshop/shared/db";
import { withOrganization } from "@printshop/shared/db/tenancy";
import { col, defineTable } from "@printshop/shared/db/table";
import { type CustomerFact, newestPerCustomer } from "../domain/customers.ts";

/** crm_customers, declared once: a customer's row holds what its newest fact states. */
const CRM_CUSTOMERS = defineTable({
  name: "crm_customers",
  tenant: true,
  noun: "Customer",
  columns: {
    customerId: col.uuid().named("id"),
    name: col.text(),
    isArchived: col.boolean(),
    deleted: col.boolean(),
    occurredAt: col.timestamp(),
    eventId: col.uuid(),
  },
});

type FactField = keyof typeof CRM_CUSTOMERS.columns;
const FACT_FIELDS = Object.keys(CRM_CUSTOMERS.columns) as FactField[];

/** What a newer fact overwrites: every column but the key, and when this service applied it. */
const APPLIED = FACT_FIELDS.filter((field) => field !== "customerId")
  .map((field) => CRM_CUSTOMERS.columnNames[field])
  .map((column) => `${column} = excluded.${column}`)
  .concat("updated_at = now()").join(", ");

/**
 * The SQL giving the name of the client of the quote row `quote` (an alias or table name): the
 * customer's name while the projection knows it and it is not deleted, else NULL. One expression
 * for the quote's JSON and the JS presenters, so they cannot disagree (the quote list's search,
 * migration 0010, reads the same rows: not deleted).
 */
export function clientNameSql(quote: string): string {
  return `(SELECT cc.name FROM crm_customers cc
    WHERE cc.organization_id = ${quote}.organization_id AND cc.id = ${quote}.client_id
      AND NOT cc.deleted)`;
}

/**
 * Applies customer facts, idempotently and in order: per customer only the newest of `facts`,
 * and that only over a row of an older event (or no row). A fact that is not newer than the row
 * (a repeated delivery, or one that arrives after a later change) changes nothing. Answers how
 * many customers changed.
 *
 * The facts of a batch may be several organisations'; each event names its own, so each
 * organisation's facts are applied in a transaction for it alone (one statement each), held to
 * the policies like a request's: a fact can only ever write its own organisation's copy. A batch
 * cut short by a failure is offered again, and applying it again is harmless.
 */
export async function applyCustomerFacts(
  sql: Sql,
  facts: readonly CustomerFact[],
): Promise<number> {
  const byOrganization = Map.groupBy(newestPerCustomer(facts), (fact) => fact.organizationId);
  let changed = 0;
  for (const [organizationId, newest] of byOrganization) {
    // Each fact under its columns' names, as jsonb_to_recordset reads them.
    const rows = newest.map((fact) =>
      Object.fromEntries([
        ["organization_id", fact.organizationId],
        ...FACT_FIELDS.map((field) => [CRM_CUSTOMERS.columnNames[field], fact[field]]),
      ])
    );
    const applied = await withOrganization(organizationId, () =>
      oneStatement(sql, (tx) =>
        tx`
          INSERT INTO crm_customers AS c (organization_id, ${tx.unsafe(CRM_CUSTOMERS.select)})
          SELECT r.organization_id, ${tx.unsafe(CRM_CUSTOMERS.selectAs("r"))}
          FROM jsonb_to_recordset(${tx.json(rows as Parameters<typeof tx.json>[0])}::jsonb)
            AS r(organization_id uuid, ${tx.unsafe(CRM_CUSTOMERS.recordTypes(FACT_FIELDS))})
          ON CONFLICT (organization_id, id) DO UPDATE SET ${tx.unsafe(APPLIED)}
            WHERE (c.occurred_at, c.event_id) < (excluded.occurred_at, excluded.event_id)
          RETURNING c.id`));
    changed += applied.length;
  }
  return changed;
}
