import { z } from "zod";
import { DateTime, Text, Uuid } from "./common.ts";

/** Whole number of units, 0 allowed (a size nobody ordered yet). */
const Quantity = z.int("Must be a whole number").min(0, "Must not be negative").max(
  10_000_000,
  "Must be at most 10000000",
);

const decimalsOf = (value: number): number => {
  const text = String(value);
  if (text.includes("e-")) return Number(text.split("e-")[1]);
  return text.split(".")[1]?.length ?? 0;
};

/** A money or rate amount sent as a JSON number, with at most `decimals` decimals. */
export const Amount = (decimals = 4, min = 0): z.ZodType<number> =>
  z.number("Must be a number").min(min, min === 0 ? "Must not be negative" : `Must be ≥ ${min}`)
    .max(1_000_000_000, "Must be at most 1000000000")
    .refine((v) => decimalsOf(v) <= decimals, `Must have at most ${decimals} decimals`);

/** A markup value: percentages may be negative (a discount below cost) and finely derived. */
const MarkupValue = z.number("Must be a number").min(-1_000_000).max(1_000_000)
  .refine((v) => decimalsOf(v) <= 10, "Must have at most 10 decimals");

/** Centimetres: 0 is a measurement, null is absence, negative is refused. */
const Centimetres = z.number("Must be a number").min(0, "Must not be negative").max(100_000)
  .refine((v) => decimalsOf(v) <= 2, "Must have at most 2 decimals");

const OptionalText = (max: number) => Text(max).nullable();
const Url = z.url({ protocol: /^https?$/, error: "Must be an http(s) URL" }).max(2000);

export const LINE_TYPES = [
  "Garment",
  "Decoration",
  "Service",
  "Cost",
  "Discount",
  "Surcharge",
  "Other",
] as const;
export const LineType = z.enum(LINE_TYPES, { error: `Must be one of ${LINE_TYPES.join(", ")}` });
export const ValueType = z.enum(["Flat", "Percentage"], { error: "Must be Flat or Percentage" });
export const MarkupType = z.enum(["percentage", "fixed"], {
  error: "Must be percentage or fixed",
});
export const MarkupSource = z.enum(["group", "manual"], { error: "Must be group or manual" });
export const MarkupLane = z.enum(["garment", "decoration", "setup"], {
  error: "Must be garment, decoration or setup",
});

/** Decoration techniques; the same set as a job's decoration method. */
export const DECORATION_METHODS = [
  "ScreenPrinting",
  "Embroidery",
  "DirectToGarment",
  "DirectToFilm",
  "HeatTransfer",
  "Sublimation",
  "PadPrinting",
  "LaserEngraving",
  "Other",
] as const;
export const DecorationMethod = z.enum(DECORATION_METHODS, {
  error: `Must be one of ${DECORATION_METHODS.join(", ")}`,
});

export const SortOrder = z.int("Must be a whole number").min(1, "Must be at least 1").max(100_000);

// ---------------------------------------------------------------------------------------------
// Responses. Cost fields are optional: they are absent without scope costs.read.

export const QuoteVariant = z.object({
  id: Uuid,
  quoteLineId: Uuid,
  size: z.string().nullable(),
  colour: z.string().nullable(),
  quantity: z.int(),
  unitPriceExGst: z.number(),
  buyPrice: z.number().optional(),
  extraCost: z.number().optional(),
  markupType: MarkupType.nullable(),
  markupValue: z.number().nullable(),
  markupSource: MarkupSource,
  markupGroupId: Uuid.nullable(),
  isCustomLine: z.boolean(),
  showOnDocuments: z.boolean(),
  sortOrder: z.int(),
  createdAt: DateTime,
  updatedAt: DateTime,
}).meta({ id: "QuoteVariant" });
export type QuoteVariant = z.infer<typeof QuoteVariant>;

export const QuoteLine = z.object({
  id: Uuid,
  quoteGroupId: Uuid,
  lineType: LineType,
  garmentCatalogueItemId: Uuid.nullable(),
  productName: z.string(),
  productSku: z.string().nullable(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  quantity: z.int(),
  unitPriceExGst: z.number(),
  valueType: ValueType.nullable(),
  percentage: z.number().nullable(),
  discountValueType: ValueType.nullable(),
  discountPercentage: z.number().nullable(),
  customImageUrl: z.string().nullable(),
  sortOrder: z.int(),
  createdAt: DateTime,
  updatedAt: DateTime,
  variants: z.array(QuoteVariant),
}).meta({ id: "QuoteLine" });
export type QuoteLine = z.infer<typeof QuoteLine>;

export const DecorationColour = z.object({ name: z.string(), isBase: z.boolean() });

export const QuoteGroupDecoration = z.object({
  id: Uuid,
  quoteGroupId: Uuid,
  decorationItemId: Uuid.nullable(),
  method: DecorationMethod.nullable(),
  position: z.string().nullable(),
  quantity: z.int(),
  setupCost: z.number().optional(),
  unitCost: z.number().optional(),
  baseUnitCost: z.number(),
  baseSetupCost: z.number(),
  includeSetupCost: z.boolean(),
  markupType: MarkupType.nullable(),
  markupValue: z.number().nullable(),
  markupSource: MarkupSource,
  markupGroupId: Uuid.nullable(),
  setupMarkupType: MarkupType.nullable(),
  setupMarkupValue: z.number().nullable(),
  setupMarkupSource: MarkupSource,
  setupMarkupGroupId: Uuid.nullable(),
  rollUp: z.boolean(),
  rollUpSetup: z.boolean(),
  showOnDocuments: z.boolean(),
  description: z.string().nullable(),
  widthCm: z.number().nullable(),
  lengthCm: z.number().nullable(),
  necklineDropCm: z.number().nullable(),
  screenCount: z.int().nullable(),
  screenMeshGrade: z.string().nullable(),
  colourCount: z.int().nullable(),
  colours: z.array(DecorationColour),
  specialInstructions: z.string().nullable(),
  artworkFileUrl: z.string().nullable(),
  separationFileUrl: z.string().nullable(),
  sortOrder: z.int(),
  createdAt: DateTime,
  updatedAt: DateTime,
}).meta({ id: "QuoteGroupDecoration" });
export type QuoteGroupDecoration = z.infer<typeof QuoteGroupDecoration>;

export const MarkupBand = z.object({
  from: z.number(),
  markupType: MarkupType,
  markupValue: z.number(),
});

export const MarkupGroup = z.object({
  id: Uuid,
  name: z.string(),
  lane: MarkupLane,
  decorationMethod: DecorationMethod.nullable(),
  isDefault: z.boolean(),
  appliesToSetupCost: z.boolean(),
  bands: z.array(MarkupBand),
  createdAt: DateTime,
  updatedAt: DateTime,
}).meta({ id: "MarkupGroup" });
export type MarkupGroup = z.infer<typeof MarkupGroup>;

export const TaxRate = z.object({
  id: Uuid,
  name: z.string(),
  ratePct: z.number(),
  isDefault: z.boolean(),
  createdAt: DateTime,
  updatedAt: DateTime,
}).meta({ id: "TaxRate" });
export type TaxRate = z.infer<typeof TaxRate>;

// ---------------------------------------------------------------------------------------------
// Request bodies.

const lineFields = {
  lineType: LineType,
  garmentCatalogueItemId: Uuid.nullable(),
  productName: Text(200),
  productSku: OptionalText(100),
  title: OptionalText(200),
  description: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  quantity: Quantity,
  unitPriceExGst: Amount(4),
  valueType: ValueType.nullable(),
  percentage: Amount(4).nullable(),
  discountValueType: ValueType.nullable(),
  discountPercentage: Amount(4).nullable(),
  customImageUrl: Url.nullable(),
  sortOrder: SortOrder,
};

export const CreateQuoteLineBody = z.strictObject({
  ...lineFields,
  garmentCatalogueItemId: lineFields.garmentCatalogueItemId.optional(),
  productSku: lineFields.productSku.optional(),
  title: lineFields.title.optional(),
  description: lineFields.description.optional(),
  quantity: lineFields.quantity.optional(),
  unitPriceExGst: lineFields.unitPriceExGst.optional(),
  valueType: lineFields.valueType.optional(),
  percentage: lineFields.percentage.optional(),
  discountValueType: lineFields.discountValueType.optional(),
  discountPercentage: lineFields.discountPercentage.optional(),
  customImageUrl: lineFields.customImageUrl.optional(),
  sortOrder: lineFields.sortOrder.optional(),
}).meta({ id: "CreateQuoteLineBody" });
export type CreateQuoteLineBody = z.infer<typeof CreateQuoteLineBody>;

export const UpdateQuoteLineBody = z.strictObject(
  Object.fromEntries(Object.entries(lineFields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof lineFields]: z.ZodOptional<typeof lineFields[K]>;
  },
).meta({ id: "UpdateQuoteLineBody" });
export type UpdateQuoteLineBody = z.infer<typeof UpdateQuoteLineBody>;

const variantFields = {
  size: OptionalText(50),
  colour: OptionalText(100),
  quantity: Quantity,
  unitPriceExGst: Amount(4),
  buyPrice: Amount(4),
  extraCost: Amount(4),
  markupType: MarkupType.nullable(),
  markupValue: MarkupValue.nullable(),
  markupSource: MarkupSource,
  markupGroupId: Uuid.nullable(),
  isCustomLine: z.boolean("Must be true or false"),
  showOnDocuments: z.boolean("Must be true or false"),
  sortOrder: SortOrder,
};

const optionalAll = <T extends Record<string, z.ZodType>>(
  fields: T,
): { [K in keyof T]: z.ZodOptional<T[K]> } =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof T]: z.ZodOptional<T[K]>;
  };

export const CreateQuoteVariantBody = z.strictObject({
  ...optionalAll(variantFields),
  quantity: variantFields.quantity,
}).meta({ id: "CreateQuoteVariantBody" });
export type CreateQuoteVariantBody = z.infer<typeof CreateQuoteVariantBody>;

export const UpdateQuoteVariantBody = z.strictObject(optionalAll(variantFields)).meta({
  id: "UpdateQuoteVariantBody",
});
export type UpdateQuoteVariantBody = z.infer<typeof UpdateQuoteVariantBody>;

const Colours = z.array(z.strictObject({
  name: Text(100),
  isBase: z.boolean("Must be true or false").default(false),
})).max(50, "At most 50 colours").refine(
  (colours) => colours.filter((c) => c.isBase).length <= 1,
  "At most one colour may be the base",
);

const decorationFields = {
  decorationItemId: Uuid.nullable(),
  method: DecorationMethod.nullable(),
  position: Text(100).nullable(),
  quantity: Quantity,
  unitCost: Amount(4),
  setupCost: Amount(4),
  baseUnitCost: Amount(4),
  baseSetupCost: Amount(4),
  includeSetupCost: z.boolean("Must be true or false"),
  markupType: MarkupType.nullable(),
  markupValue: MarkupValue.nullable(),
  markupSource: MarkupSource,
  markupGroupId: Uuid.nullable(),
  setupMarkupType: MarkupType.nullable(),
  setupMarkupValue: MarkupValue.nullable(),
  setupMarkupSource: MarkupSource,
  setupMarkupGroupId: Uuid.nullable(),
  rollUp: z.boolean("Must be true or false"),
  rollUpSetup: z.boolean("Must be true or false"),
  showOnDocuments: z.boolean("Must be true or false"),
  description: OptionalText(500),
  widthCm: Centimetres.nullable(),
  lengthCm: Centimetres.nullable(),
  necklineDropCm: Centimetres.nullable(),
  screenCount: z.int("Must be a whole number").min(0, "Must not be negative").max(1000)
    .nullable(),
  screenMeshGrade: OptionalText(50),
  colourCount: z.int("Must be a whole number").min(0, "Must not be negative").max(1000)
    .nullable(),
  colours: Colours,
  specialInstructions: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  artworkFileUrl: Url.nullable(),
  separationFileUrl: Url.nullable(),
  sortOrder: SortOrder,
};

export const CreateQuoteDecorationBody = z.strictObject({
  ...optionalAll(decorationFields),
  quantity: decorationFields.quantity,
}).meta({ id: "CreateQuoteDecorationBody" });
export type CreateQuoteDecorationBody = z.infer<typeof CreateQuoteDecorationBody>;

export const UpdateQuoteDecorationBody = z.strictObject(optionalAll(decorationFields)).meta({
  id: "UpdateQuoteDecorationBody",
});
export type UpdateQuoteDecorationBody = z.infer<typeof UpdateQuoteDecorationBody>;

const Bands = z.array(z.strictObject({
  from: Amount(4),
  markupType: MarkupType,
  markupValue: MarkupValue,
})).min(1, "Give at least one band").max(100, "At most 100 bands");

const markupGroupFields = {
  name: Text(200),
  lane: MarkupLane,
  decorationMethod: DecorationMethod.nullable(),
  isDefault: z.boolean("Must be true or false"),
  appliesToSetupCost: z.boolean("Must be true or false"),
  bands: Bands,
};

export const CreateMarkupGroupBody = z.strictObject({
  ...markupGroupFields,
  decorationMethod: markupGroupFields.decorationMethod.optional(),
  isDefault: markupGroupFields.isDefault.optional(),
  appliesToSetupCost: markupGroupFields.appliesToSetupCost.optional(),
}).meta({ id: "CreateMarkupGroupBody" });
export type CreateMarkupGroupBody = z.infer<typeof CreateMarkupGroupBody>;

export const UpdateMarkupGroupBody = z.strictObject(optionalAll(markupGroupFields)).meta({
  id: "UpdateMarkupGroupBody",
});
export type UpdateMarkupGroupBody = z.infer<typeof UpdateMarkupGroupBody>;

export const CreateTaxRateBody = z.strictObject({
  name: Text(100),
  ratePct: Amount(4).refine((v) => v <= 100, "Must be at most 100"),
  isDefault: z.boolean("Must be true or false").optional(),
}).meta({ id: "CreateTaxRateBody" });
export type CreateTaxRateBody = z.infer<typeof CreateTaxRateBody>;

export const UpdateQuoteGroupBody = z.strictObject({
  name: Text(200).optional(),
  sortOrder: SortOrder.optional(),
  rollUpDecoration: z.boolean("Must be true or false").optional(),
  rollUpSetup: z.boolean("Must be true or false").optional(),
}).meta({ id: "UpdateQuoteGroupBody" });
export type UpdateQuoteGroupBody = z.infer<typeof UpdateQuoteGroupBody>;

export const ReorderBody = z.strictObject({
  items: z.array(z.strictObject({
    id: Uuid,
    kind: z.enum(["line", "decoration"], { error: "Must be line or decoration" }),
  })).max(10_000),
}).meta({ id: "ReorderBody" });
export type ReorderBody = z.infer<typeof ReorderBody>;
