import type { Queryable, Sql } from "@printshop/shared/db";
import type {
  CreateMarkupGroupBody,
  MarkupGroup,
  UpdateMarkupGroupBody,
} from "@printshop/shared/contracts";
import { ApiError, type ErrorDetail } from "@printshop/shared/http";
import { uuidv7 } from "@printshop/shared/ids";
import { writeEvent } from "@printshop/shared/outbox";
import {
  type BandProblem,
  type MarkupBand,
  type MarkupLane,
  toDecimal,
  validateBands,
} from "../domain/markup.ts";

/** A markup group as the pricing rules need it. */
export interface PricingMarkupGroup {
  id: string;
  lane: MarkupLane;
  decorationMethod: string | null;
  isDefault: boolean;
  appliesToSetupCost: boolean;
  bands: MarkupBand[];
}

interface BandJson {
  from: number;
  markupType: "percentage" | "fixed";
  markupValue: number;
}

/** Every markup group of the organisation, for re-banding. */
export async function markupGroupsForPricing(
  sql: Queryable,
  organizationId: string,
): Promise<PricingMarkupGroup[]> {
  const rows = await sql<{
    id: string;
    lane: MarkupLane;
    decoration_method: string | null;
    is_default: boolean;
    applies_to_setup_cost: boolean;
    bands: BandJson[];
  }[]>`
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
 * The group a `group`-source lane bands through: the one it names, else the organisation's
 * default for the lane (for decorations, a default for the decoration's method first; for setup,
 * one that applies to setup cost).
 */
export function groupForLane(
  groups: readonly PricingMarkupGroup[],
  lane: MarkupLane,
  named: string | null,
  method: string | null = null,
): PricingMarkupGroup | null {
  if (named) return groups.find((g) => g.id === named && g.lane === lane) ?? null;
  const defaults = groups.filter((g) =>
    g.lane === lane && g.isDefault && (lane !== "setup" || g.appliesToSetupCost)
  );
  return defaults.find((g) => method !== null && g.decorationMethod === method) ??
    defaults.find((g) => g.decorationMethod === null) ?? defaults[0] ?? null;
}

// ---------------------------------------------------------------------------------------------
// The markup-group resource (`/v1/markup-groups`).

type DecorationMethodName = NonNullable<MarkupGroup["decorationMethod"]>;

const MARKUP_GROUP_COLUMNS = `id, name, lane, decoration_method, is_default,
  applies_to_setup_cost, bands, created_at, updated_at`;

interface MarkupGroupRow {
  id: string;
  name: string;
  lane: MarkupLane;
  decoration_method: DecorationMethodName | null;
  is_default: boolean;
  applies_to_setup_cost: boolean;
  bands: BandJson[];
  created_at: Date;
  updated_at: Date;
}

function toMarkupGroup(row: MarkupGroupRow): MarkupGroup {
  return {
    id: row.id,
    name: row.name,
    lane: row.lane,
    decorationMethod: row.decoration_method,
    isDefault: row.is_default,
    appliesToSetupCost: row.applies_to_setup_cost,
    bands: row.bands.map((b) => ({
      from: Number(b.from),
      markupType: b.markupType,
      markupValue: Number(b.markupValue),
    })),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The fields of a markup group its rules are checked on, after defaults and a PATCH merge. */
export interface MarkupGroupCandidate {
  lane: MarkupLane;
  decorationMethod: DecorationMethodName | null;
  appliesToSetupCost: boolean;
  bands: readonly BandJson[];
}

/** `validateBands` problems as 400 details, one per offending band field (`bands.1.from`). */
function bandDetails(bands: readonly BandJson[], problem: BandProblem): ErrorDetail[] {
  switch (problem.code) {
    case "no_bands":
      return [{ path: "bands", message: problem.message }];
    case "invalid_number":
      return [{ path: `bands.${problem.index}.${problem.field}`, message: problem.message }];
    case "not_a_quantity":
    case "negative_from":
      return [{ path: `bands.${problem.index}.from`, message: problem.message }];
    case "duplicate_from": {
      const [first, ...rest] = problem.indexes;
      return rest.map((index) => ({
        path: `bands.${index}.from`,
        message:
          `Duplicates the from of band ${first} (${problem.from}); from values must be unique`,
      }));
    }
    case "first_band_start": {
      const lowest = toDecimal(problem.from);
      return bands.flatMap((band, index) =>
        toDecimal(band.from).eq(lowest)
          ? [{ path: `bands.${index}.from`, message: problem.message }]
          : []
      );
    }
  }
}

/**
 * The problems with a markup group as it would be stored, empty when it is valid:
 *
 * - bands: `validateBands(lane, …)` on the bands as exact decimal strings;
 * - `decorationMethod` is refused on the garment and setup lanes (only decorations have a method);
 * - `appliesToSetupCost` is exactly "the lane is setup". The API derives it when it is not sent
 *   (create; or a PATCH that changes the lane) and refuses a value that contradicts the lane, so a
 *   stored group can never be a setup group that pricing would skip, or vice versa.
 */
export function markupGroupProblems(candidate: MarkupGroupCandidate): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (candidate.decorationMethod !== null && candidate.lane !== "decoration") {
    details.push({
      path: "decorationMethod",
      message:
        `Only decoration-lane groups have a decoration method; send null on the ${candidate.lane} lane`,
    });
  }
  const setup = candidate.lane === "setup";
  if (candidate.appliesToSetupCost !== setup) {
    details.push({
      path: "appliesToSetupCost",
      message: setup
        ? "Must be true for a setup-lane group"
        : `Must be false: only setup-lane groups apply to setup cost, this one is on the ${candidate.lane} lane`,
    });
  }
  const bands: MarkupBand[] = candidate.bands.map((b) => ({
    from: String(b.from),
    markupType: b.markupType,
    markupValue: String(b.markupValue),
  }));
  for (const problem of validateBands(candidate.lane, bands)) {
    details.push(...bandDetails(candidate.bands, problem));
  }
  return details;
}

function assertValid(candidate: MarkupGroupCandidate): void {
  const details = markupGroupProblems(candidate);
  const [first] = details;
  if (!first) return;
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : "";
  throw new ApiError(
    "validation_error",
    `Invalid markup group: "${first.path}" ${first.message.charAt(0).toLowerCase()}${
      first.message.slice(1)
    }${more}`,
    details,
  );
}

/** A band as stored in the `bands` jsonb column (a type alias, so it is assignable to JSON). */
type StoredBand = {
  from: number;
  markupType: "percentage" | "fixed";
  markupValue: number;
};

/** Bands are stored (and answered) in ascending `from` order; their order carries no meaning. */
function sortedBands(bands: readonly BandJson[]): StoredBand[] {
  return [...bands]
    .sort((a, b) => toDecimal(a.from).comparedTo(toDecimal(b.from)))
    .map((b) => ({ from: b.from, markupType: b.markupType, markupValue: b.markupValue }));
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
    RETURNING ${tx.unsafe(MARKUP_GROUP_COLUMNS)}`;
  for (const row of rows) {
    const group = toMarkupGroup(row);
    await writeEvent(tx, {
      organizationId,
      type: "markup_group.updated",
      aggregateId: group.id,
      payload: group,
    });
  }
}

export async function listMarkupGroups(
  sql: Queryable,
  organizationId: string,
): Promise<MarkupGroup[]> {
  const rows = await sql<MarkupGroupRow[]>`
    SELECT ${sql.unsafe(MARKUP_GROUP_COLUMNS)} FROM markup_groups
    WHERE organization_id = ${organizationId} ORDER BY created_at, id`;
  return rows.map(toMarkupGroup);
}

export async function findMarkupGroup(
  sql: Queryable,
  organizationId: string,
  id: string,
): Promise<MarkupGroup | null> {
  const [row] = await sql<MarkupGroupRow[]>`
    SELECT ${sql.unsafe(MARKUP_GROUP_COLUMNS)} FROM markup_groups
    WHERE organization_id = ${organizationId} AND id = ${id}`;
  return row ? toMarkupGroup(row) : null;
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
  return await sql.begin(async (tx) => {
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
      ) RETURNING ${tx.unsafe(MARKUP_GROUP_COLUMNS)}`;
    const group = toMarkupGroup(row!);
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
 * unless it is sent. Null when the group is not the organisation's; throws a 400 `ApiError` when
 * the rules refuse the result.
 */
export async function updateMarkupGroup(
  sql: Sql,
  organizationId: string,
  id: string,
  input: UpdateMarkupGroupBody,
): Promise<MarkupGroup | null> {
  return await sql.begin(async (tx) => {
    await lockDefaults(tx, organizationId);
    const [row] = await tx<MarkupGroupRow[]>`
      SELECT ${tx.unsafe(MARKUP_GROUP_COLUMNS)} FROM markup_groups
      WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`;
    if (!row) return null;
    if (Object.keys(input).length === 0) return toMarkupGroup(row);
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
      RETURNING ${tx.unsafe(MARKUP_GROUP_COLUMNS)}`;
    const group = toMarkupGroup(updated!);
    await writeEvent(tx, {
      organizationId,
      type: "markup_group.updated",
      aggregateId: group.id,
      payload: group,
    });
    return group;
  });
}

export type DeleteMarkupGroupResult =
  | { outcome: "deleted"; group: MarkupGroup }
  | { outcome: "not_found" }
  | { outcome: "in_use"; variants: number; decorations: number };

/**
 * Deletes a group no quote row uses. The group row is locked first: a variant or decoration being
 * pointed at it holds a key-share lock on it (the foreign key), so the count below cannot miss a
 * row committed before the delete, and one committed after fails its own foreign-key check.
 */
export async function deleteMarkupGroup(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<DeleteMarkupGroupResult> {
  return await sql.begin(async (tx): Promise<DeleteMarkupGroupResult> => {
    const [row] = await tx<MarkupGroupRow[]>`
      SELECT ${tx.unsafe(MARKUP_GROUP_COLUMNS)} FROM markup_groups
      WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`;
    if (!row) return { outcome: "not_found" };
    const [usage] = await tx<{ variants: number; decorations: number }[]>`
      SELECT
        (SELECT count(*)::int FROM quote_variants WHERE markup_group_id = ${id}) AS variants,
        (SELECT count(*)::int FROM quote_decorations
          WHERE markup_group_id = ${id} OR setup_markup_group_id = ${id}) AS decorations`;
    if (usage!.variants + usage!.decorations > 0) {
      return { outcome: "in_use", variants: usage!.variants, decorations: usage!.decorations };
    }
    await tx`DELETE FROM markup_groups WHERE id = ${id}`;
    const group = toMarkupGroup(row);
    await writeEvent(tx, {
      organizationId,
      type: "markup_group.deleted",
      aggregateId: group.id,
      payload: group,
    });
    return { outcome: "deleted", group };
  });
}
