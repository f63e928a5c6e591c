/**
 * Custom field rules, as pure functions: whether a record's values fit the organisation's
 * definitions for its entity, and which changes to a definition its values still allow.
 */
import type { ErrorDetail } from "@printshop/shared/http";
import type { CustomFieldType } from "@printshop/shared/contracts/crm";
import { IsoDate } from "@printshop/shared/contracts";

/** What the rules need of a definition. */
export interface Definition {
  id: string;
  name: string;
  type: CustomFieldType;
  options: readonly string[];
}

/** Why one value does not fit its definition, or null when it does. */
function valueProblem(definition: Definition, value: unknown): string | null {
  const options = definition.options;
  switch (definition.type) {
    case "text":
      return typeof value === "string" ? null : "Must be text";
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : "Must be a number";
    case "date":
      return IsoDate.safeParse(value).success ? null : "Must be a date as YYYY-MM-DD";
    case "boolean":
      return typeof value === "boolean" ? null : "Must be true or false";
    case "select":
      return typeof value === "string" && options.includes(value)
        ? null
        : `Must be one of ${options.map((o) => `"${o}"`).join(", ")}`;
    case "multiselect":
      if (!Array.isArray(value)) return "Must be a list of options";
      if (new Set(value).size !== value.length) return "Each option may appear once";
      return value.every((v) => typeof v === "string" && options.includes(v))
        ? null
        : `Must be options among ${options.map((o) => `"${o}"`).join(", ")}`;
  }
}

/**
 * The problems with a record's custom field values (each named `<path>.<definition id>`): a
 * key that is not a definition for this entity, or a value of the wrong type or outside the
 * options. A null value removes the field and always fits, whatever the key.
 */
export function customFieldProblems(
  definitions: readonly Definition[],
  values: Readonly<Record<string, unknown>>,
  path = "customFields",
): ErrorDetail[] {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  const problems: ErrorDetail[] = [];
  for (const [id, value] of Object.entries(values)) {
    const definition = byId.get(id.toLowerCase());
    // Null removes: it fits any key, so a value left by a deleted definition can be cleared.
    if (value === null) continue;
    if (!definition) {
      problems.push({
        path: `${path}.${id}`,
        message: "No custom field with this id for this kind of record",
      });
      continue;
    }
    const problem = valueProblem(definition, value);
    if (problem) {
      problems.push({ path: `${path}.${id}`, message: `${definition.name}: ${problem}` });
    }
  }
  return problems;
}

/**
 * A record's values after a write: the stored ones with the given ones laid over, null
 * removing a field, keys lower-cased (ids compare as the database writes them).
 */
export function mergedValues(
  stored: Readonly<Record<string, unknown>>,
  given: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...stored };
  for (const [id, value] of Object.entries(given)) {
    const key = id.toLowerCase();
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** Why a definition's options cannot change so (a kept value would fall outside), or null. */
export function optionsProblem(
  type: CustomFieldType,
  usedOptions: readonly string[],
  options: readonly string[],
): ErrorDetail | null {
  if (type !== "select" && type !== "multiselect") {
    return options.length === 0
      ? null
      : { path: "options", message: `A ${type} field has no options` };
  }
  if (options.length === 0) {
    return { path: "options", message: `A ${type} field needs at least one option` };
  }
  const dropped = usedOptions.filter((used) => !options.includes(used));
  return dropped.length === 0 ? null : {
    path: "options",
    message: `Records still hold ${dropped.map((o) => `"${o}"`).join(", ")}; keep ` +
      `${dropped.length === 1 ? "it" : "them"} or change those records first`,
  };
}
