import type { Queryable } from "@printshop/shared/db";
import { uuidv7 } from "@printshop/shared/ids";
import { notFound } from "@printshop/shared/http";

export interface Organization {
  id: string;
  name: string;
  requestsPerMinute: number | null;
  createdAt: string;
}

interface OrganizationRow {
  id: string;
  name: string;
  requests_per_minute: number | null;
  created_at: Date;
}

const toOrganization = (row: OrganizationRow): Organization => ({
  id: row.id,
  name: row.name,
  requestsPerMinute: row.requests_per_minute,
  createdAt: row.created_at.toISOString(),
});

export async function createOrganization(sql: Queryable, name: string): Promise<Organization> {
  const [row] = await sql<OrganizationRow[]>`
    INSERT INTO organizations (id, name) VALUES (${uuidv7()}, ${name})
    RETURNING id, name, requests_per_minute, created_at`;
  return toOrganization(row!);
}

export async function findOrganization(sql: Queryable, id: string): Promise<Organization> {
  const [row] = await sql<OrganizationRow[]>`
    SELECT id, name, requests_per_minute, created_at FROM organizations WHERE id = ${id}`;
  if (!row) throw notFound("Organization", id);
  return toOrganization(row);
}

export async function listOrganizations(sql: Queryable): Promise<Organization[]> {
  const rows = await sql<OrganizationRow[]>`
    SELECT id, name, requests_per_minute, created_at FROM organizations ORDER BY id`;
  return rows.map(toOrganization);
}

export async function setRequestsPerMinute(
  sql: Queryable,
  id: string,
  requestsPerMinute: number | null,
): Promise<Organization> {
  const [row] = await sql<OrganizationRow[]>`
    UPDATE organizations SET requests_per_minute = ${requestsPerMinute}, updated_at = now()
    WHERE id = ${id}
    RETURNING id, name, requests_per_minute, created_at`;
  if (!row) throw notFound("Organization", id);
  return toOrganization(row);
}
