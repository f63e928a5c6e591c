import { type Queryable, type Sql, transaction } from "@printshop/shared/db";
import {
  type CreateMarkupGroupBody,
  DECORATION_METHODS,
  ListMarkupGroupsQuery,
  type MARKUP_GROUP_SORT_FIELDS,
  MARKUP_LANES,
  type MarkupGroup,
  type MarkupLane,
  type UpdateMarkupGroupBody,
} from "@printshop/shared/contracts/quotes";
import type { FieldTable } from "@printshop/shared/db/fields";
import { listSpec, offsetPage, type OffsetPageOf } from "@printshop/shared/db/pages";
import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import { conflict, invalid } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import {
  type BandJson,
  laneProblem,
  type MarkupGroupCandidate,
  markupGroupProblems,
  noDefaultGroupProblem,
  type PricingMarkupGroup,
  sortedBands,
} from "../domain/markup_groups.ts";

/**
 * The markup_groups table, declared once. Bands are stored as the API gives them (JSON numbers,
 * sortedBands) and answered as stored.
 */
const MARKUP_GROUPS = defineTable({
  name: "markup_groups",
  tenant: true,
  noun: "Markup group",
  columns: {
    id: col.uuid(),
    name: col.text().filterable(),
    lane: col.enum(MARKUP_LANES).filterable(),
    decorationMethod: col.enum(DECORATION_METHODS).nullable().filterable(),
    isDefault: col.boolean().filterable(),
    appliesToSetupCost: col.boolean().filterable(),
    bands: col.json<BandJson[]>(),
    createdAt: col.timestamp().filterable(),
    updatedAt: col.timestamp().filterable(),
  },
});

type MarkupGroupRow = RowOf<typeof MARKUP_GROUPS>;

/** Every markup group of the organisation, for re-banding. */
export async function markupGroupsForPricing(
  sql: Queryable,
  organizationId: string,
): Promise<PricingMarkupGroup[]> {
  const rows = await sql<
    Pick<
      MarkupGroupRow,
      "id" | "lane" | "decoration_method" | "is_default" | "applies_to_setup_cost" | "bands"
    >[]
  >`
    SELECT id, lane, decoration_method, is_default, applies_to_setup_cost, bands
    FROM markup_groups WHERE organization_id = ${organizationId}`;
  return rows.map((row) => ({
    id: row.id,
    lane: row.lane,
    decorationMethod: row.decoration_method,
    isDefault: row.is_default,
    appliesToSetupCost: row.applies_to_setup_cost,
    bands: row.bands.map((b) => ({
      from: String(b.from),
      markupType: b.markupType,
      markupValue: String(b.markupValue),
    })),
  }));
}

/**
 * A markup group a row names must be one of this organisation's groups, on the lane the field is
 * for; otherwise 400 naming the field. (Another organisation's group is refused exactly like one
 * that does not exist.) The group found is held (FOR KEY SHARE, the lock the row's foreign key
 * would take) until the row is written: a delete of it waits, then counts that row (409). Without
 * it, a delete that took the group between this check and the row's write left the write to fail
 * its foreign key, a 500.
 */
export async function assertGroupOfLane(
  tx: Queryable,
  organizationId: string,
  field: string,
  id: string | null | undefined,
  lane: MarkupLane,
): Promise<void> {
  if (id === undefined || id === null) return;
  const [found] = await tx<{ lane: MarkupLane }[]>`
    SELECT lane FROM markup_groups WHERE organization_id = ${organizationId} AND id = ${id}
    FOR KEY SHARE`;
  const problem = laneProblem(field, found?.lane, lane);
  if (problem) throw invalid("request body", [problem]);
}

/**
 * A `group` row that names no group bands through the organisation's default for its lane (for
 * a decoration, one for its method first). Without one the row could never be priced, so asking
 * for it is a 400 naming the field that asked.
 */
export async function assertDefaultGroup(
  tx: Queryable,
  organizationId: string,
  field: string,
  lane: MarkupLane,
  method: string | null = null,
): Promise<void> {
  const problem = noDefaultGroupProblem(
    await markupGroupsForPricing(tx, organizationId),
    field,
    lane,
    method,
  );
  if (problem) throw invalid("request body", [problem]);
}

// ---------------------------------------------------------------------------------------------
// The markup-group resource (`/v1/markup-groups`).

function assertValid(candidate: MarkupGroupCandidate): void {
  const details = markupGroupProblems(candidate);
  if (details.length > 0) throw invalid("markup group", details);
}

/**
 * Serialises the writes of one organisation's markup groups that can move a default (create,
 * PATCH) for the rest of the transaction. Taken before any row lock, always, so two such writes
 * never deadlock and never both insert a default for the same lane and method.
 */
async function lockDefaults(tx: Queryable, organizationId: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtext('markup_groups.default'), hashtext(${organizationId}))`;
}

/** Unsets the current default for (lane, method) other than `keepId`, with an event for each. */
async function unsetDefault(
  tx: Queryable,
  organizationId: string,
  lane: MarkupLane,
  decorationMethod: string | null,
  keepId: string,
): Promise<void> {
  const rows = await tx<MarkupGroupRow[]>`
    UPDATE markup_groups SET is_default = false, updated_at = now()
    WHERE organization_id = ${organizationId} AND lane = ${lane}
      AND coalesce(decoration_method, '') = ${decorationMethod ?? ""}
      AND is_default AND id <> ${keepId}
    RETURNING ${tx.unsafe(MARKUP_GROUPS.select)}`;
  for (const row of rows) {
    const group = MARKUP_GROUPS.read(row);
    await writeEvent(tx, {
      organizationId,
      type: "markup_group.updated",
      aggregateId: group.id,
      payload: group,
    });
  }
}

/** The markup-group list's fields: what `filters` may name, and what `sortField` orders on. */
export const MARKUP_GROUP_FIELDS = MARKUP_GROUPS.fields() satisfies FieldTable<
  typeof MARKUP_GROUP_SORT_FIELDS[number]
>;

const MARKUP_GROUP_LIST = listSpec(ListMarkupGroupsQuery, {
  from: "markup_groups",
  select: MARKUP_GROUPS.select,
  fields: MARKUP_GROUP_FIELDS,
  order: { field: "createdAt", direction: "asc" },
});

/** One page of the organisation's markup groups; oldest first unless a sort is asked for. */
export async function listMarkupGroups(
  sql: Queryable,
  organizationId: string,
  query: ListMarkupGroupsQuery,
  pageSizeMax: number,
): Promise<OffsetPageOf<MarkupGroup>> {
  return await offsetPage(
    sql,
    MARKUP_GROUP_LIST,
    { where: MARKUP_GROUPS.ofOrganization(organizationId)(sql), query, pageSizeMax },
    (rows: MarkupGroupRow[]) => rows.map(MARKUP_GROUPS.read),
  );
}

export async function findMarkupGroup(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<MarkupGroup> {
  const row = await MARKUP_GROUPS.get(sql, organizationId, id);
  return MARKUP_GROUPS.read(row);
}

/**
 * Creates a group; `isDefault` makes it the default of its (lane, decorationMethod) and unsets the
 * previous one in the same transaction. Throws a 400 `ApiError` when the rules refuse it.
 */
export async function createMarkupGroup(
  sql: Sql,
  organizationId: string,
  input: CreateMarkupGroupBody,
): Promise<MarkupGroup> {
  const candidate: MarkupGroupCandidate = {
    lane: input.lane,
    decorationMethod: input.decorationMethod ?? null,
    appliesToSetupCost: input.appliesToSetupCost ?? input.lane === "setup",
    bands: input.bands,
  };
  assertValid(candidate);
  const isDefault = input.isDefault ?? false;
  return await transaction(sql, async (tx) => {
    const id = uuidv7();
    if (isDefault) {
      await lockDefaults(tx, organizationId);
      await unsetDefault(tx, organizationId, candidate.lane, candidate.decorationMethod, id);
    }
    const [row] = await tx<MarkupGroupRow[]>`
      INSERT INTO markup_groups (
        id, organization_id, name, lane, decoration_method, is_default, applies_to_setup_cost, bands
      ) VALUES (
        ${id}, ${organizationId}, ${input.name}, ${candidate.lane}, ${candidate.decorationMethod},
        ${isDefault}, ${candidate.appliesToSetupCost}, ${tx.json(sortedBands(candidate.bands))}
      ) RETURNING ${tx.unsafe(MARKUP_GROUPS.select)}`;
    const group = MARKUP_GROUPS.read(row!);
    await writeEvent(tx, {
      organizationId,
      type: "markup_group.created",
      aggregateId: group.id,
      payload: group,
    });
    return group;
  });
}

/**
 * Changes a group; fields not sent keep their value, `bands` (when sent) replace the old ones as
 * a whole. The merged group is checked against every rule, so changing only the lane can be
 * refused because of the bands or method it keeps. `appliesToSetupCost` follows a changed lane
 * unless it is sent. 404 when the group is not the organisation's; 400 when the rules refuse
 * the result.
 */
export async function updateMarkupGroup(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateMarkupGroupBody,
): Promise<MarkupGroup> {
  return await transaction(sql, async (tx) => {
    await lockDefaults(tx, organizationId);
    const row = await MARKUP_GROUPS.lock(tx, organizationId, id);
    if (Object.keys(input).length === 0) return MARKUP_GROUPS.read(row);
    const lane = input.lane ?? row.lane;
    const candidate: MarkupGroupCandidate = {
      lane,
      decorationMethod: input.decorationMethod !== undefined
        ? input.decorationMethod
        : row.decoration_method,
      appliesToSetupCost: input.appliesToSetupCost ??
        (input.lane !== undefined ? lane === "setup" : row.applies_to_setup_cost),
      bands: input.bands ?? row.bands,
    };
    assertValid(candidate);
    const isDefault = input.isDefault ?? row.is_default;
    if (isDefault) {
      await unsetDefault(tx, organizationId, candidate.lane, candidate.decorationMethod, id);
    }
    const [updated] = await tx<MarkupGroupRow[]>`
      UPDATE markup_groups SET
        name = ${input.name ?? row.name},
        lane = ${candidate.lane},
        decoration_method = ${candidate.decorationMethod},
        is_default = ${isDefault},
        applies_to_setup_cost = ${candidate.appliesToSetupCost},
        bands = ${tx.json(sortedBands(candidate.bands))},
        updated_at = now()
      WHERE id = ${id}
      RETURNING ${tx.unsafe(MARKUP_GROUPS.select)}`;
    const group = MARKUP_GROUPS.read(updated!);
    await writeEvent(tx, {
      organizationId,
      type: "markup_group.updated",
      aggregateId: group.id,
      payload: group,
    });
    return group;
  });
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * Deletes a group no quote row uses (409 naming how many use it otherwise). The group row is
 * locked first: a variant or decoration being pointed at it holds a key-share lock on it from its
 * check (assertGroupOfLane) to its commit, so the count below cannot miss it, and a write that
 * checks after the delete took the lock finds the group gone (400).
 */
export async function deleteMarkupGroup(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<MarkupGroup> {
  return await transaction(sql, async (tx) => {
    const row = await MARKUP_GROUPS.lock(tx, organizationId, id);
    const [usage] = await tx<{ variants: number; decorations: number }[]>`
      SELECT
        (SELECT count(*)::int FROM quote_variants WHERE markup_group_id = ${id}) AS variants,
        (SELECT count(*)::int FROM quote_decorations
          WHERE markup_group_id = ${id} OR setup_markup_group_id = ${id}) AS decorations`;
    const { variants, decorations } = usage!;
    if (variants + decorations > 0) {
      throw conflict(
        `Markup group "${id}" is used by ${plural(variants + decorations, "quote row")} (${
          plural(variants, "variant")
        }, ${plural(decorations, "decoration")}); point them elsewhere before deleting it`,
      );
    }
    await tx`DELETE FROM markup_groups WHERE id = ${id}`;
    const group = MARKUP_GROUPS.read(row);
    await writeEvent(tx, {
      organizationId,
      type: "markup_group.deleted",
      aggregateId: group.id,
      payload: group,
    });
    return group;
  });
}
