import { z } from "zod";
import { PUBLIC_ERROR_CODES } from "../http/errors.ts";

export const Uuid = z.uuid({ error: "Must be a UUID" });

/**
 * "At least one of these fields", in JSON Schema, for the document (a body's `.meta`): a `value`
 * (an id, so a string) is given and not null, a `list` is given and not empty. The server enforces the same rule in
 * its own code, whose messages name every field; the schema lets a client's validator and a
 * generator know it too.
 */
export function atLeastOneOf(
  fields: Readonly<Record<string, "value" | "list">>,
): { anyOf: Record<string, unknown>[] } {
  return {
    // Each branch constrains its one field and leaves the rest to the body's own schema.
    anyOf: Object.entries(fields).map(([name, kind]) => ({
      required: [name],
      properties: {
        [name]: kind === "list"
          ? { type: "array", minItems: 1, description: `\`${name}\` with at least one entry` }
          : { type: "string", description: `\`${name}\` given, not null` },
      },
      additionalProperties: true,
    })),
  };
}

/**
 * Adds cross-field rules to a schema's document (`allOf`), beside what it has; the server keeps
 * its own checks and messages. For rules a body's fields alone say (`atLeastOneOf`,
 * `givenTogether`, `whenThen`).
 */
export function documentRules(schema: z.ZodType, rules: readonly Record<string, unknown>[]): void {
  const meta = z.globalRegistry.get(schema) ?? {};
  const allOf = Array.isArray(meta.allOf) ? meta.allOf : [];
  z.globalRegistry.add(schema, { ...meta, allOf: [...allOf, ...rules.map(open)] });
}

/**
 * A rule's fragment names the properties it constrains and leaves the others to the body's
 * schema: said outright (`additionalProperties: true`), as example checkers that close every
 * schema listing properties (Redocly's) would otherwise refuse every other field.
 */
function open(node: unknown): Record<string, unknown> {
  const fragment = node as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fragment)) {
    copy[key] = Array.isArray(value)
      ? value.map((v) => (typeof v === "object" && v !== null ? open(v) : v))
      : typeof value === "object" && value !== null && key !== "properties"
      ? open(value)
      : value;
  }
  if ("properties" in copy && !("additionalProperties" in copy)) copy.additionalProperties = true;
  return copy;
}

/** A field given, whatever its value (null too). */
export const given = (field: string): Record<string, unknown> => ({
  required: [field],
  properties: { [field]: {} },
});

/** A field given and not null. */
const present = (field: string): Record<string, unknown> => ({
  required: [field],
  properties: { [field]: { not: { type: "null" } } },
});

/** "`a` and `b` are given together": either one given (not null) needs the other. */
export function givenTogether(a: string, b: string): Record<string, unknown>[] {
  return [
    { if: present(a), then: present(b) },
    { if: present(b), then: present(a) },
  ];
}

/** When `when` holds, `then` must: each a JSON Schema over the body. */
export function whenThen(
  when: Record<string, unknown>,
  then: Record<string, unknown>,
): Record<string, unknown> {
  return { if: when, then };
}

/** The fields are absent or null. */
export function absentOrNull(...fields: string[]): Record<string, unknown> {
  return { properties: Object.fromEntries(fields.map((f) => [f, { type: "null" }])) };
}

/** How a caller authenticated: an organisation's own key, or a partner app acting for it. */
export const CREDENTIAL_KINDS = ["tenant_key", "partner"] as const;
export type CredentialKind = typeof CREDENTIAL_KINDS[number];

const isRealDate = (value: string): boolean => {
  const date = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
};

/** Year 0 is a date to JavaScript but not to PostgreSQL (there is no year 0 AD). */
const afterYearZero = (value: string): boolean => !value.startsWith("0000");

/** A calendar date, `YYYY-MM-DD`, that exists (no 2026-02-30). */
export const IsoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "Must be a date as YYYY-MM-DD")
  .refine(isRealDate, "Must be a real calendar date")
  .refine(afterYearZero, "Must be a date from the year 0001 on");

export const DateTime = z.iso.datetime({ precision: 3 }).refine(
  afterYearZero,
  "Must be a time from the year 0001 on",
).meta({ description: "RFC 3339 UTC with milliseconds" });

/** A trimmed, non-empty string of bounded length. */
export const Text = (max: number): z.ZodType<string> =>
  z.string().trim().min(1, "Must not be empty").max(max, `Must be at most ${max} characters`);

/**
 * The id a row has in the integrator's own system (an order number, a storefront's product id):
 * what a sync finds the row it made by. The organisation holds each once per kind of row
 * (shared/db/held_keys.ts).
 */
export const ExternalId: z.ZodNullable<z.ZodType<string>> = Text(200).nullable();

/** The description of a resource's `externalId`, naming the rows it is unique among. */
export function externalIdDescription(rows: string): string {
  return "The id of this row in your own system (an order number, a storefront's id), at most " +
    `200 characters; unique among the organisation's ${rows}: a create or change naming one ` +
    "another row holds is refused with 409, naming that row";
}

/** The list filter that finds the row a sync made by its external id. */
export function externalIdFilter(
  row: string,
): { externalId: z.ZodOptional<z.ZodString> } {
  return described({
    // Trimmed as the field is when written, so a sync's raw id finds what it wrote.
    externalId: z.string().trim().max(200, "Must be at most 200 characters").optional(),
  }, {
    externalId:
      `Only the ${row} with this externalId (exact, after trimming spaces at either end, ` +
      "as a written one is)",
  });
}

export const Email = z.email({ error: "Must be an email address" }).max(
  320,
  "Must be at most 320 characters",
);

/**
 * Object fields, each given its one-line description for the documents. A resource's response
 * and its write bodies take their descriptions from one table, so each field is described once;
 * the compiler asks for a description of every field given. A field that is itself a component
 * (a schema with an id) is left as it is: describing it would copy it inline, and the
 * component's own description serves.
 */
export function described<const F extends Record<string, z.ZodType>>(
  fields: F,
  descriptions: { readonly [K in keyof F]: string },
): F {
  return Object.fromEntries(
    Object.entries(fields).map(([name, schema]) => [
      name,
      z.globalRegistry.get(schema)?.id === undefined
        ? schema.describe(descriptions[name as keyof F])
        : schema,
    ]),
  ) as F;
}

/**
 * Gives a schema the examples the documents show for it. Called right after the schema is
 * declared, so the compiler checks each example against the schema's type (inside the schema's
 * own `.meta()` an example's type would refer to the schema being declared); the OpenAPI tests
 * check each one against the published JSON Schema as well.
 */
export function setExamples<S extends z.ZodType>(
  schema: S,
  ...examples: [z.output<S>, ...z.output<S>[]]
): void {
  z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), examples });
}

const ErrorDetailItem = z.object(described({ path: z.string(), message: z.string() }, {
  path: "The offending field, dot-separated (`groups.0.name`), or the parameter or header name",
  message: "What is wrong with it and what would be accepted",
}));

export const ErrorEnvelope = z.object(described({
  error: z.enum(Object.keys(PUBLIC_ERROR_CODES) as [keyof typeof PUBLIC_ERROR_CODES]),
  message: z.string(),
  status: z.literal(false),
  details: z.array(ErrorDetailItem).optional(),
}, {
  error: "Stable machine-readable code; each code always comes with the same HTTP status",
  message: "Human-readable explanation that says what to change; not meant for parsing",
  status: "Always false on an error",
  details: "One entry per problem, where the failure concerns named fields",
})).meta({ id: "ErrorEnvelope", description: "The body of every non-2xx answer" });
setExamples(ErrorEnvelope, {
  error: "validation_error",
  message: 'Invalid request body: "quantity" must not be negative',
  status: false,
  details: [{ path: "quantity", message: "Must not be negative" }],
});

export function successEnvelope<T extends z.ZodType>(
  data: T,
): z.ZodObject<{ status: z.ZodBoolean; message: z.ZodString; data: T }> {
  return z.object({
    ...described({
      status: z.boolean().meta({ examples: [true] }),
      message: z.string().meta({ examples: ["OK"] }),
    }, {
      status: "The operation's own outcome: false when it ran but did not succeed (a " +
        "replayed delivery that failed again)",
      message: 'Short human-readable outcome, such as "Quote created"; not meant for parsing',
    }),
    // Described by its own schema: a component's description, or a page's.
    data,
  });
}

/**
 * Offset-list `data`: one page of items, the count of every matching row (null when the request
 * said `count=false`) and whether rows follow this page.
 */
export function page<T extends z.ZodType>(
  item: T,
): z.ZodObject<
  { items: z.ZodArray<T>; totalCount: z.ZodNullable<z.ZodInt>; hasMore: z.ZodBoolean }
> {
  return z.object(described({
    items: z.array(item),
    // The documents' list examples show one item, so one row matches.
    totalCount: z.int().min(0).nullable().meta({ examples: [1] }),
    hasMore: z.boolean().meta({ examples: [false] }),
  }, {
    items: "This page's rows, in the requested order",
    totalCount: "How many rows match the filters across every page; null when the request " +
      "said `count=false`",
    hasMore: "Whether rows follow this page (`offset` + `limit` is short of the matches)",
  })).describe("One page of a list, with the count of every match");
}

/** Cursor-list `data`: one page of items and where the next one starts (null at the end). */
export function cursorPage<T extends z.ZodType>(
  item: T,
): z.ZodObject<{ items: z.ZodArray<T>; nextCursor: z.ZodNullable<z.ZodString> }> {
  return z.object(described({
    items: z.array(item),
    // An opaque token; the example is the shape one takes, not one any list would accept.
    nextCursor: z.string().nullable().meta({
      examples: ["eyJiIjoiN2Q0YSIsInYiOiI1MDAwIiwiaSI6IjAxOTMifQ.q8Xz3kY0bWc2hR1tJm9pLw"],
    }),
  }, {
    items: "This page's rows, in keyset order",
    nextCursor: "Pass as `cursor` for the next page; null when this page is the last",
  })).describe("One page of a cursor list");
}

export const SortDirection = z.enum(["asc", "desc"], { error: "Must be asc or desc" });

/** Parses a non-negative integer query parameter. */
export const NonNegativeIntParam = z.string().regex(/^\d{1,9}$/, "Must be a whole number ≥ 0")
  .transform(Number);

/** A true/false query parameter, spelled `true` or `false`. */
export const BooleanParam = z.enum(["true", "false"], { error: "Must be true or false" })
  .transform((value) => value === "true");

/** `data` of a DELETE: the id of what is gone. */
export const Deleted = z.object(described({ id: Uuid }, { id: "The id of the deleted row" }))
  .meta({ id: "Deleted", description: "What a delete removed" });
setExamples(Deleted, { id: "0192f4c1-7a3e-7b10-9c55-3e2f6a8d1b04" });

/** The query of an endpoint that takes no parameters: any given one is refused by name. */
export const NoQuery = z.strictObject({});

/** The same fields, each optional: a PATCH body from the fields a create takes. */
export function optionalAll<T extends Record<string, z.ZodType>>(
  fields: T,
): { [K in keyof T]: z.ZodOptional<T[K]> } {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof T]: z.ZodOptional<T[K]>;
  };
}

type Fields = Record<string, z.ZodType>;

type CreateShape<F extends Fields, R extends keyof F> = {
  [K in keyof F]: K extends R ? F[K] : z.ZodOptional<F[K]>;
};

/**
 * A resource's create and update bodies from one list of its writable fields: the create
 * requires `required` and takes the rest if given; the update takes any of them. They are
 * listed in the document as `Create<name>Body` and `Update<name>Body`.
 */
export function writeBodies<
  const F extends Fields,
  const R extends keyof F & string = never,
>(
  name: string,
  fields: F,
  required: readonly R[] = [],
): {
  create: z.ZodObject<CreateShape<F, R>, z.core.$strict>;
  update: z.ZodObject<{ [K in keyof F]: z.ZodOptional<F[K]> }, z.core.$strict>;
} {
  const create = Object.fromEntries(
    Object.entries(fields).map(([key, schema]) => [
      key,
      (required as readonly string[]).includes(key) ? schema : schema.optional(),
    ]),
  ) as CreateShape<F, R>;
  const label = name.replace(/(?<=[a-z])(?=[A-Z])/g, " ").toLowerCase();
  return {
    create: z.strictObject(create).meta({
      id: `Create${name}Body`,
      description: `The fields of a new ${label}; those not given take their defaults`,
    }),
    update: z.strictObject(optionalAll(fields)).meta({
      id: `Update${name}Body`,
      description: `The ${label} fields to change; those not given stay as they are`,
    }) as z.ZodObject<
      { [K in keyof F]: z.ZodOptional<F[K]> },
      z.core.$strict
    >,
  };
}
