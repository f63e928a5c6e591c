/**
 * The quotes service's copy of the CRM's customers (crm_customers, migration 0003), kept from the
 * CRM's `customer.*` events by the consumer (consumer.ts). Quotes read a client's name from here;
 * the crm schema is never read.
 */
import type { Queryable } from "@printshop/shared/db";
import { type CustomerFact, newestPerCustomer } from "../domain/customers.ts";

/**
 * The SQL giving the name of the client of the quote row `quote` (an alias or table name): the
 * customer's name while the projection knows it and it is not deleted, else NULL. One expression
 * for the quote's JSON, the quote list's search and the JS presenters, so they cannot disagree.
 */
export function clientNameSql(quote: string): string {
  return `(SELECT cc.name FROM crm_customers cc
    WHERE cc.organization_id = ${quote}.organization_id AND cc.id = ${quote}.client_id
      AND NOT cc.deleted)`;
}

/**
 * Applies customer facts, idempotently and in order: per customer only the newest of `facts`,
 * and that only over a row of an older event (or no row). A fact that is not newer than the row
 * (a repeated delivery, or one that arrives after a later change) changes nothing. One statement
 * whatever the number of facts. Answers how many customers changed.
 */
export async function applyCustomerFacts(
  sql: Queryable,
  facts: readonly CustomerFact[],
): Promise<number> {
  const newest = newestPerCustomer(facts);
  if (newest.length === 0) return 0;
  const rows = newest.map((f) => ({
    organization_id: f.organizationId,
    id: f.customerId,
    name: f.name,
    is_archived: f.isArchived,
    deleted: f.deleted,
    occurred_at: f.occurredAt,
    event_id: f.eventId,
  }));
  const applied = await sql`
    INSERT INTO crm_customers AS c
      (organization_id, id, name, is_archived, deleted, occurred_at, event_id)
    SELECT r.organization_id, r.id, r.name, r.is_archived, r.deleted, r.occurred_at, r.event_id
    FROM jsonb_to_recordset(${sql.json(rows as Parameters<typeof sql.json>[0])}::jsonb) AS r(
      organization_id uuid, id uuid, name text, is_archived boolean, deleted boolean,
      occurred_at timestamptz, event_id uuid)
    ON CONFLICT (organization_id, id) DO UPDATE
      SET name = excluded.name, is_archived = excluded.is_archived, deleted = excluded.deleted,
          occurred_at = excluded.occurred_at, event_id = excluded.event_id, updated_at = now()
      WHERE (c.occurred_at, c.event_id) < (excluded.occurred_at, excluded.event_id)
    RETURNING c.id`;
  return applied.length;
}
