/** Mocks: SQL, one transaction per change, each with its event. */
import { type Queryable, read, type Sql, transaction } from "@printshop/shared/db";
import {
  type CreateMockBody,
  type ListMocksQuery,
  type Mock,
  MOCK_OWNER_FIELDS,
  type UpdateMockBody,
} from "@printshop/shared/contracts/proofs";
import { changedColumns } from "@printshop/shared/db/fields";
import { conflict, invalid } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { writeEvent } from "@printshop/shared/outbox";
import { ownerProblems } from "../domain/rules.ts";
import { mockImagesRefusal } from "../domain/evidence.ts";
import { revisionsShowingMock } from "./revisions.ts";

const MOCKS = defineTable({
  name: "mocks",
  tenant: true,
  noun: "Mock",
  columns: {
    id: col.uuid(),
    quoteId: col.uuid().nullable(),
    quoteGroupId: col.uuid().nullable(),
    jobId: col.uuid().nullable(),
    name: col.text(),
    images: col.textArray(),
    notes: col.text().nullable(),
    createdAt: col.timestamp(),
    updatedAt: col.timestamp(),
  },
});

type MockRow = RowOf<typeof MOCKS>;

export async function findMock(sql: Queryable, organizationId: string, id: string): Promise<Mock> {
  const row = await MOCKS.get(sql, organizationId, id);
  return MOCKS.read(row);
}

/**
 * The mocks of a job, quote or quote group (the filters given narrow together), oldest first,
 * at most `cap` of them; `truncated` when there were more. The list is not paged (spec 4.9), so
 * it must be narrowed: without any of the three it is a 400 naming them.
 */
export async function listMocks(
  sql: Queryable,
  organizationId: string,
  query: ListMocksQuery,
  cap: number,
): Promise<{ items: Mock[]; truncated: boolean }> {
  const problems = ownerProblems(query, MOCK_OWNER_FIELDS, "The mock list");
  if (problems.length > 0) {
    throw invalid(
      "query",
      problems.map((p) => ({
        ...p,
        message: "Give at least one of quoteId, quoteGroupId or jobId: the list is not paged, " +
          "so it is always narrowed",
      })),
    );
  }
  const conditions = MOCK_OWNER_FIELDS.flatMap((field) => {
    const value = query[field];
    return value === undefined ? [] : [sql`${sql(MOCKS.columnNames[field])} = ${value}`];
  }).reduce((acc, c) => sql`${acc} AND ${c}`, sql`organization_id = ${organizationId}`);
  const rows = await read(sql, (q) =>
    q<MockRow[]>`
      SELECT ${q.unsafe(MOCKS.select)} FROM mocks WHERE ${conditions}
      ORDER BY created_at, id LIMIT ${cap + 1}`);
  return { items: rows.slice(0, cap).map(MOCKS.read), truncated: rows.length > cap };
}

export async function createMock(
  sql: Sql,
  organizationId: string,
  input: CreateMockBody,
): Promise<Mock> {
  const problems = ownerProblems(input, MOCK_OWNER_FIELDS, "A mock");
  if (problems.length > 0) throw invalid("mock", problems);
  return await transaction(sql, async (tx) => {
    const [row] = await tx<MockRow[]>`
      INSERT INTO mocks ${
      tx({ id: uuidv7(), organization_id: organizationId, ...changedColumns(input) })
    }
      RETURNING ${tx.unsafe(MOCKS.select)}`;
    const mock = MOCKS.read(row!);
    await writeEvent(tx, {
      organizationId,
      type: "mock.created",
      aggregateId: mock.id,
      payload: mock,
    });
    return mock;
  });
}

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((value, i) => value === b[i]);

/**
 * Changes a mock. Its images are what proof revisions show of it: while a fixed revision (sent,
 * decided, approved) shows the mock, other images are 409 naming that revision; its other fields
 * are not shown and change freely.
 */
export async function updateMock(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateMockBody,
): Promise<Mock> {
  return await transaction(sql, async (tx) => {
    const current = MOCKS.read(await MOCKS.lock(tx, organizationId, id));
    const problems = ownerProblems({ ...current, ...input }, MOCK_OWNER_FIELDS, "A mock");
    if (problems.length > 0) throw invalid("mock", problems);
    if (input.images !== undefined && !sameList(input.images, current.images)) {
      // The mock is locked, and a send, decision or approval of a revision showing it locks it
      // too (lockShownMocks): the revisions read here stay as read until this commits.
      const refusal = mockImagesRefusal(id, await revisionsShowingMock(tx, id));
      if (refusal !== null) throw conflict(refusal);
    }
    const changes = changedColumns(input);
    if (Object.keys(changes).length === 0) return current;
    const [row] = await tx<MockRow[]>`
      UPDATE mocks SET ${tx(changes)}, updated_at = now() WHERE id = ${id}
      RETURNING ${tx.unsafe(MOCKS.select)}`;
    const mock = MOCKS.read(row!);
    await writeEvent(tx, { organizationId, type: "mock.updated", aggregateId: id, payload: mock });
    return mock;
  });
}

/** Deletes a mock no revision shows; one that a revision shows is 409 naming the proofs. */
export async function deleteMock(sql: Sql, organizationId: string, id: string): Promise<Mock> {
  return await transaction(sql, async (tx) => {
    const mock = MOCKS.read(await MOCKS.lock(tx, organizationId, id));
    const users = await tx<{ proof_id: string; number: number }[]>`
      SELECT r.proof_id, r.number FROM proof_revision_mocks m
      JOIN proof_revisions r ON r.id = m.revision_id
      WHERE m.mock_id = ${id} ORDER BY r.proof_id, r.number`;
    if (users.length > 0) {
      const proofs = [...new Set(users.map((u) => u.proof_id))];
      const named = proofs.slice(0, 3).map((p) => `"${p}"`).join(", ");
      const more = proofs.length > 3 ? ` and ${proofs.length - 3} more` : "";
      throw conflict(
        `Mock "${id}" is shown by ${users.length} proof revision${users.length === 1 ? "" : "s"} ` +
          `(proof ${named}${more}); a revision keeps what it showed, so delete those proofs ` +
          `before deleting the mock`,
      );
    }
    await tx`DELETE FROM mocks WHERE id = ${id}`;
    await writeEvent(tx, { organizationId, type: "mock.deleted", aggregateId: id, payload: mock });
    return mock;
  });
}
