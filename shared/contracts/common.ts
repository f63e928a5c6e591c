import { z } from "zod";
import { ERROR_CODES } from "../http/errors.ts";

export const Uuid = z.uuid({ error: "Must be a UUID" });

/** How a caller authenticated: an organisation's own key, or a partner app acting for it. */
export const CREDENTIAL_KINDS = ["tenant_key", "partner"] as const;
export type CredentialKind = typeof CREDENTIAL_KINDS[number];

const isRealDate = (value: string): boolean => {
  const date = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
};

/** A calendar date, `YYYY-MM-DD`, that exists (no 2026-02-30). */
export const IsoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "Must be a date as YYYY-MM-DD")
  .refine(isRealDate, "Must be a real calendar date");

export const DateTime = z.iso.datetime({ precision: 3 }).meta({
  description: "RFC 3339 UTC with milliseconds",
});

/** A trimmed, non-empty string of bounded length. */
export const Text = (max: number): z.ZodType<string> =>
  z.string().trim().min(1, "Must not be empty").max(max, `Must be at most ${max} characters`);

export const Email = z.email({ error: "Must be an email address" }).max(
  320,
  "Must be at most 320 characters",
);

export const ErrorEnvelope = z.object({
  error: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES]),
  message: z.string(),
  status: z.literal(false),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
}).meta({ id: "ErrorEnvelope" });

export function successEnvelope<T extends z.ZodType>(
  data: T,
): z.ZodObject<{ status: z.ZodBoolean; message: z.ZodString; data: T }> {
  return z.object({ status: z.boolean(), message: z.string(), data });
}

/** Offset-list `data`: one page of items and the count of every matching row. */
export function page<T extends z.ZodType>(
  item: T,
): z.ZodObject<{ items: z.ZodArray<T>; totalCount: z.ZodInt }> {
  return z.object({ items: z.array(item), totalCount: z.int().min(0) });
}

/** Cursor-list `data`: one page of items and where the next one starts (null at the end). */
export function cursorPage<T extends z.ZodType>(
  item: T,
): z.ZodObject<{ items: z.ZodArray<T>; nextCursor: z.ZodNullable<z.ZodString> }> {
  return z.object({
    items: z.array(item),
    nextCursor: z.string().nullable().meta({
      description: "Pass as `cursor` for the next page; null when this page is the last",
    }),
  });
}

export const SortDirection = z.enum(["asc", "desc"], { error: "Must be asc or desc" });

/** Parses a non-negative integer query parameter. */
export const NonNegativeIntParam = z.string().regex(/^\d{1,9}$/, "Must be a whole number ≥ 0")
  .transform(Number);

/** `data` of a DELETE: the id of what is gone. */
export const Deleted = z.object({ id: Uuid }).meta({ id: "Deleted" });

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
  return {
    create: z.strictObject(create).meta({ id: `Create${name}Body` }),
    update: z.strictObject(optionalAll(fields)).meta({ id: `Update${name}Body` }) as z.ZodObject<
      { [K in keyof F]: z.ZodOptional<F[K]> },
      z.core.$strict
    >,
  };
}
