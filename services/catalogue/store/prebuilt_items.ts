import { type Queryable, type Sql, transaction, type TransactionSql } from "@printshop/shared/db";
import {
  type CreatePrebuiltItemBody,
  ListPrebuiltItemsQuery,
  type PREBUILT_ITEM_SORT_FIELDS,
  PREBUILT_ITEM_STATUSES,
  type PrebuiltDecoration,
  type PrebuiltDecorationInput,
  type PrebuiltItem,
  type PrebuiltItemStatus,
} from "@printshop/shared/contracts/catalogue";
import type { BulkResult, BulkTarget } from "@printshop/shared/contracts/bulk";
import { COSTS_READ } from "@printshop/shared/scopes";
import { type BulkDecision, runBulk } from "@printshop/shared/db/bulk-target";
import type { FieldTable } from "@printshop/shared/db/fields";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import { ApiError, conflict, invalid, notFound } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent, writeEvents } from "@printshop/shared/outbox";
import { statusMove } from "../domain/prebuilt_status.ts";

/** The prebuilt_items table: each field of PrebuiltItem, in the order it answers them. */
const PREBUILTS = defineTable({
  name: "prebuilt_items",
  tenant: true,
  noun: "Pre-built item",
  references: { garment_catalogue_item_id: "catalogue_items" },
  columns: {
    id: col.uuid(),
    name: col.text().filterable(),
    description: col.text().nullable().filterable(),
    garmentCatalogueItemId: col.uuid().nullable().filterable(),
    status: col.enum(PREBUILT_ITEM_STATUSES).filterable(),
    defaultColors: col.textArray(),
    defaultSizes: col.textArray(),
    decorations: col.json<PrebuiltDecoration[]>(),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
  },
});

type PrebuiltItemRow = RowOf<typeof PREBUILTS>;

const toPrebuiltItem = (row: PrebuiltItemRow): PrebuiltItem => PREBUILTS.read(row);

/** A decoration as stored and answered: every field present, null where not given. */
function toStoredDecoration(input: PrebuiltDecorationInput): PrebuiltDecoration {
  return {
    method: input.method ?? null,
    position: input.position ?? null,
    description: input.description ?? null,
    widthCm: input.widthCm ?? null,
    lengthCm: input.lengthCm ?? null,
    necklineDropCm: input.necklineDropCm ?? null,
    screenCount: input.screenCount ?? null,
    screenMeshGrade: input.screenMeshGrade ?? null,
    colourCount: input.colourCount ?? null,
    colours: input.colours ?? [],
    specialInstructions: input.specialInstructions ?? null,
    artworkFileUrl: input.artworkFileUrl ?? null,
    separationFileUrl: input.separationFileUrl ?? null,
    unitCost: input.unitCost ?? null,
    setupCost: input.setupCost ?? null,
  };
}

function decorationsParam(
  tx: Queryable,
  input: CreatePrebuiltItemBody,
): ReturnType<Queryable["json"]> {
  const decorations = (input.decorations ?? []).map(toStoredDecoration);
  return tx.json(decorations as Parameters<Queryable["json"]>[0]);
}

/**
 * The garment a pre-built item names must be one of this organisation's catalogue items: 400
 * naming the field otherwise (another organisation's item exactly like one that does not exist,
 * and never the foreign key's error). The item is key-share locked, so it cannot be deleted
 * before this transaction commits.
 */
async function assertGarment(
  tx: Queryable,
  organizationId: string,
  id: string | null | undefined,
): Promise<void> {
  if (id === undefined || id === null) return;
  const [found] = await tx`
    SELECT 1 FROM catalogue_items WHERE organization_id = ${organizationId} AND id = ${id}
    FOR KEY SHARE`;
  if (found) return;
  throw invalid("request body", [{
    path: "garmentCatalogueItemId",
    message: `Must be a catalogue item of this organisation; "${id}" is not one`,
  }]);
}

/** The pre-built item list's fields: what `filters` may name, and what `sortField` orders on. */
export const PREBUILT_ITEM_FIELDS = PREBUILTS.fields() satisfies FieldTable<
  typeof PREBUILT_ITEM_SORT_FIELDS[number]
>;

/** The list, and the rows a bulk target's filter branch selects. */
const PREBUILT_ITEM_LIST = listSpec(ListPrebuiltItemsQuery, {
  from: "prebuilt_items",
  select: PREBUILTS.select,
  fields: PREBUILT_ITEM_FIELDS,
  search: "prebuilt_items_matching",
  order: { field: "createdAt", direction: "asc" },
});

/** One page of the organisation's pre-built items; oldest first unless a sort is asked for. */
export async function listPrebuiltItems(
  sql: Queryable,
  organizationId: string,
  query: ListPrebuiltItemsQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<PrebuiltItem>> {
  return await offsetPage(
    sql,
    PREBUILT_ITEM_LIST,
    { where: sql`organization_id = ${organizationId}`, query, pageSizeMax },
    (rows: PrebuiltItemRow[]) => rows.map(toPrebuiltItem),
  );
}

export async function findPrebuiltItem(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<PrebuiltItem> {
  const row = await PREBUILTS.get(sql, organizationId, id);
  return toPrebuiltItem(row);
}

/**
 * Inserts the item under `id` unless the organisation already has one with that id (ids are
 * unique within an organisation, whatever other organisations use); null when it has. Writes
 * `prebuilt_item.created`.
 */
async function insertItem(
  tx: TransactionSql,
  organizationId: string,
  id: string,
  input: CreatePrebuiltItemBody,
): Promise<PrebuiltItem | null> {
  const [row] = await tx<PrebuiltItemRow[]>`
    INSERT INTO prebuilt_items (
      id, organization_id, name, description, garment_catalogue_item_id, status,
      default_colors, default_sizes, decorations
    ) VALUES (
      ${id}, ${organizationId}, ${input.name}, ${input.description ?? null},
      ${input.garmentCatalogueItemId ?? null}, ${input.status ?? "draft"},
      ${input.defaultColors ?? []}::text[], ${input.defaultSizes ?? []}::text[],
      ${decorationsParam(tx, input)}
    )
    ON CONFLICT (organization_id, id) DO NOTHING
    RETURNING ${tx.unsafe(PREBUILTS.select)}`;
  if (!row) return null;
  const item = toPrebuiltItem(row);
  await writeEvent(tx, {
    organizationId,
    type: "prebuilt_item.created",
    aggregateId: item.id,
    payload: item,
  });
  return item;
}

/** Creates a pre-built item with a new id; its garment must be the organisation's (400). */
export async function createPrebuiltItem(
  sql: Sql,
  organizationId: string,
  input: CreatePrebuiltItemBody,
): Promise<PrebuiltItem> {
  return await transaction(sql, async (tx) => {
    await assertGarment(tx, organizationId, input.garmentCatalogueItemId);
    const item = await insertItem(tx, organizationId, uuidv7(), input);
    if (!item) throw new Error("A new uuidv7 collided with an existing pre-built item");
    return item;
  });
}

/** Whether any decoration of a stored item carries a cost. */
function hasCosts(row: PrebuiltItemRow): boolean {
  return row.decorations.some((d) =>
    (d.unitCost !== null && d.unitCost !== undefined) ||
    (d.setupCost !== null && d.setupCost !== undefined)
  );
}

/**
 * PUT: creates the item under the client's id (`created: true`), or replaces the organisation's
 * item of that id. A replace takes every field from the body (defaults for those not given) but
 * keeps the status when none is given; a status given must be a move the lifecycle allows (409).
 * A caller without costs.read cannot replace an item whose decorations carry costs (403): the
 * body cannot hold them, so the replace would erase them unseen.
 *
 * Ids are the organisation's own: an id another organisation uses creates this organisation's
 * item like any new id, and nothing of the other one is read, changed or told.
 */
export async function putPrebuiltItem(
  sql: Sql,
  organizationId: string,
  id: string,
  input: CreatePrebuiltItemBody,
  costs: boolean,
): Promise<{ item: PrebuiltItem; created: boolean }> {
  return await transaction(sql, async (tx) => {
    await assertGarment(tx, organizationId, input.garmentCatalogueItemId);
    const findOwn = async (): Promise<PrebuiltItemRow | undefined> =>
      (await tx<PrebuiltItemRow[]>`
        SELECT ${tx.unsafe(PREBUILTS.select)} FROM prebuilt_items
        WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`)[0];
    let existing = await findOwn();
    if (!existing) {
      const item = await insertItem(tx, organizationId, id, input);
      if (item) return { item, created: true };
      // Taken by a PUT of this organisation that committed meanwhile: this one replaces it.
      existing = await findOwn();
      if (!existing) {
        throw conflict(
          `Pre-built item "${id}" was created and deleted by other requests while this one ` +
            "ran; send it again",
        );
      }
    }
    if (!costs && hasCosts(existing)) {
      throw new ApiError(
        "insufficient_scope",
        `Replacing pre-built item "${id}" would clear its decorations' costs; that needs scope ` +
          `"${COSTS_READ}"`,
      );
    }
    const status = input.status ?? existing.status;
    const move = statusMove(existing.status, status);
    if (move.kind === "refused") throw conflict(`${move.reason} (pre-built item "${id}")`);
    const [row] = await tx<PrebuiltItemRow[]>`
      UPDATE prebuilt_items SET
        name = ${input.name},
        description = ${input.description ?? null},
        garment_catalogue_item_id = ${input.garmentCatalogueItemId ?? null},
        status = ${status},
        default_colors = ${input.defaultColors ?? []}::text[],
        default_sizes = ${input.defaultSizes ?? []}::text[],
        decorations = ${decorationsParam(tx, input)},
        updated_at = now()
      WHERE organization_id = ${organizationId} AND id = ${id}
      RETURNING ${tx.unsafe(PREBUILTS.select)}`;
    const item = toPrebuiltItem(row!);
    await writeEvent(tx, {
      organizationId,
      type: "prebuilt_item.updated",
      aggregateId: item.id,
      payload: item,
    });
    return { item, created: false };
  });
}

async function writeDeleted(
  tx: TransactionSql,
  organizationId: string,
  rows: readonly PrebuiltItemRow[],
): Promise<void> {
  await writeEvents(
    tx,
    rows.map((row) => ({
      organizationId,
      type: "prebuilt_item.deleted" as const,
      aggregateId: row.id,
      payload: toPrebuiltItem(row),
    })),
  );
}

export async function deletePrebuiltItem(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<PrebuiltItem> {
  return await transaction(sql, async (tx) => {
    const [row] = await tx<PrebuiltItemRow[]>`
      DELETE FROM prebuilt_items WHERE organization_id = ${organizationId} AND id = ${id}
      RETURNING ${tx.unsafe(PREBUILTS.select)}`;
    if (!row) throw notFound(PREBUILTS.noun, id);
    await writeDeleted(tx, organizationId, [row]);
    return toPrebuiltItem(row);
  });
}

/** Deletes every item of the target, one `prebuilt_item.deleted` per item; nothing refuses. */
export async function bulkDeletePrebuiltItems(
  sql: Sql,
  organizationId: string,
  target: BulkTarget,
  bulkMaxRows: number,
): Promise<BulkResult> {
  return await runBulk<PrebuiltItemRow, null>(
    sql,
    PREBUILT_ITEM_LIST,
    { where: PREBUILTS.ofOrganization(organizationId), target, bulkMaxRows },
    () => ({ status: "ok", change: null }),
    async (tx, changes) => {
      const ids = changes.map(({ row }) => row.id);
      await tx`
        DELETE FROM prebuilt_items
        WHERE organization_id = ${organizationId} AND id = ANY(${ids}::uuid[])`;
      await writeDeleted(tx, organizationId, changes.map(({ row }) => row));
    },
  );
}

/** The status decision for one row, as the bulk runner takes it. */
function decideStatus(
  row: PrebuiltItemRow,
  to: PrebuiltItemStatus,
): BulkDecision<PrebuiltItemStatus> {
  const move = statusMove(row.status, to);
  switch (move.kind) {
    case "unchanged":
      return { status: "unchanged" };
    case "refused":
      return { status: "refused", reason: move.reason };
    case "move":
      return { status: "ok", change: move.to };
  }
}

/**
 * Moves every item of the target to `status`: items already there are `unchanged`, moves the
 * lifecycle does not allow are `refused` with the reason, one `prebuilt_item.updated` per item
 * moved.
 */
export async function bulkSetPrebuiltItemStatus(
  sql: Sql,
  organizationId: string,
  target: BulkTarget,
  status: PrebuiltItemStatus,
  bulkMaxRows: number,
): Promise<BulkResult> {
  return await runBulk<PrebuiltItemRow, PrebuiltItemStatus>(
    sql,
    PREBUILT_ITEM_LIST,
    { where: PREBUILTS.ofOrganization(organizationId), target, bulkMaxRows },
    (row) => decideStatus(row, status),
    async (tx, changes) => {
      const ids = changes.map(({ row }) => row.id);
      const rows = await tx<PrebuiltItemRow[]>`
        UPDATE prebuilt_items SET status = ${status}, updated_at = now()
        WHERE organization_id = ${organizationId} AND id = ANY(${ids}::uuid[])
        RETURNING ${tx.unsafe(PREBUILTS.select)}`;
      // RETURNING has no order: events follow the target's.
      const byId = new Map(rows.map((row) => [row.id, row]));
      await writeEvents(
        tx,
        ids.map((id) => ({
          organizationId,
          type: "prebuilt_item.updated" as const,
          aggregateId: id,
          payload: toPrebuiltItem(byId.get(id)!),
        })),
      );
    },
  );
}
