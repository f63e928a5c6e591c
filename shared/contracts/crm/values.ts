/** Value types and enums of the CRM; each list is written here only. */
import { z } from "zod";
import { DateTime, Email, Text, Uuid } from "../common.ts";
import { OptionalText } from "../quotes/values.ts";

/** Customer tiers, lowest first: what a shop's price breaks and service levels key on. */
export const CUSTOMER_TIERS = ["standard", "bronze", "silver", "gold", "wholesale"] as const;
export const CustomerTier = z.enum(CUSTOMER_TIERS, {
  error: `Must be one of ${CUSTOMER_TIERS.join(", ")}`,
});
export type CustomerTier = typeof CUSTOMER_TIERS[number];

/** What a custom field holds. */
export const CUSTOM_FIELD_TYPES = [
  "text",
  "number",
  "date",
  "boolean",
  "select",
  "multiselect",
] as const;
export const CustomFieldType = z.enum(CUSTOM_FIELD_TYPES, {
  error: `Must be one of ${CUSTOM_FIELD_TYPES.join(", ")}`,
});
export type CustomFieldType = typeof CUSTOM_FIELD_TYPES[number];

/**
 * What a custom field describes. Customers, vendors and tasks carry values here; quotes and jobs
 * are listed for integrators that keep definitions for them in one place.
 */
export const CUSTOM_FIELD_ENTITIES = ["customer", "vendor", "task", "quote", "job"] as const;
export const CustomFieldEntity = z.enum(CUSTOM_FIELD_ENTITIES, {
  error: `Must be one of ${CUSTOM_FIELD_ENTITIES.join(", ")}`,
});
export type CustomFieldEntity = typeof CUSTOM_FIELD_ENTITIES[number];

/** Most values one record may carry. */
export const CUSTOM_FIELD_VALUES_MAX = 100;

/** A custom field's value as sent: checked against its definition when it is written. */
const CustomFieldValue = z.union([
  z.string().max(2000, "Must be at most 2000 characters"),
  z.number(),
  z.boolean(),
  z.array(z.string().max(200, "Must be at most 200 characters")).max(100, "At most 100 values"),
  z.null(),
]);

/** `{ <definition id>: value }`; null clears a value. */
export const CustomFieldValues = z.record(Uuid, CustomFieldValue).refine(
  (values) => Object.keys(values).length <= CUSTOM_FIELD_VALUES_MAX,
  `At most ${CUSTOM_FIELD_VALUES_MAX} custom field values`,
).describe(
  "Values by custom field definition id, checked against each definition (type, options); " +
    "null removes a value",
);
export type CustomFieldValues = z.infer<typeof CustomFieldValues>;

/** One description per field of a contact, as answered and as written. */
export const CONTACT_DESCRIPTIONS = {
  firstName: "First name",
  lastName: "Last name",
  email: "Email address",
  phone: "Phone number, as the shop writes it",
  role: "What the person does there (`Buyer`, `Accounts`)",
};

/** A contact's writable fields; customers' and vendors' contacts share them. */
export const contactFields = {
  firstName: OptionalText(100),
  lastName: OptionalText(100),
  email: Email.nullable(),
  phone: OptionalText(50),
  role: OptionalText(100),
};

/** A contact's fields as answered. */
export const contactShape = {
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  role: z.string().nullable(),
  createdAt: DateTime,
  updatedAt: DateTime,
};

/** One description per field of an address, as answered and as written. */
export const ADDRESS_DESCRIPTIONS = {
  label: "What the shop calls it (`Warehouse`, `Head office`)",
  street: "Street address, lines separated by newlines",
  city: "City or suburb",
  state: "State or region",
  postcode: "Postcode",
  country: "Country, as an ISO 3166-1 alpha-2 code or a name",
};

/** An address's writable fields; customers' and vendors' addresses share them. */
export const addressFields = {
  label: OptionalText(100),
  street: OptionalText(500),
  city: OptionalText(100),
  state: OptionalText(100),
  postcode: OptionalText(20),
  country: OptionalText(100),
};

/** An address's fields as answered. */
export const addressShape = {
  label: z.string().nullable(),
  street: z.string().nullable(),
  city: z.string().nullable(),
  state: z.string().nullable(),
  postcode: z.string().nullable(),
  country: z.string().nullable(),
  createdAt: DateTime,
  updatedAt: DateTime,
};

export const TIMESTAMP_DESCRIPTIONS = {
  createdAt: "When it was created",
  updatedAt: "When it last changed",
};

/** A tag: short, trimmed, compared without regard to case. */
export const Tag = Text(50);

/** Most tags one customer holds. */
export const TAGS_MAX = 50;
