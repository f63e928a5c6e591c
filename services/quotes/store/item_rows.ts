import { col, defineTable, type RowOf } from "@printshop/shared/db/table";
import {
  DECORATION_METHODS,
  LINE_TYPES,
  MARKUP_SOURCES,
  MARKUP_TYPES,
  type QuoteGroupDecoration,
  type QuoteLine,
  type QuoteVariant,
  VALUE_TYPES,
} from "@printshop/shared/contracts/quotes";
import { visibleTo } from "@printshop/shared/costs";

/**
 * The tables of the rows below a group, each declared once, its columns in the order the API
 * shows the fields. Amounts are JSON numbers here; the recomputation reads them as exact text
 * (aggregate.ts).
 */
export const LINES = defineTable({
  name: "quote_lines",
  tenant: true,
  noun: "Quote line",
  references: { quote_group_id: "quote_groups" },
  columns: {
    id: col.uuid(),
    quoteGroupId: col.uuid(),
    lineType: col.enum(LINE_TYPES),
    garmentCatalogueItemId: col.uuid().nullable(),
    productName: col.text(),
    productSku: col.text().nullable(),
    title: col.text().nullable(),
    description: col.text().nullable(),
    quantity: col.integer(),
    unitPriceExGst: col.number(),
    valueType: col.enum(VALUE_TYPES).nullable(),
    percentage: col.number().nullable(),
    discountValueType: col.enum(VALUE_TYPES).nullable(),
    discountPercentage: col.number().nullable(),
    customImageUrl: col.text().nullable(),
    sortOrder: col.integer(),
    createdAt: col.timestamp(),
    updatedAt: col.timestamp(),
    variants: col.computed<QuoteVariant[]>(),
  },
});

export const VARIANTS = defineTable({
  name: "quote_variants",
  tenant: true,
  noun: "Quote variant",
  references: { quote_line_id: "quote_lines", markup_group_id: "markup_groups" },
  columns: {
    id: col.uuid(),
    quoteLineId: col.uuid(),
    size: col.text().nullable(),
    colour: col.text().nullable(),
    quantity: col.integer(),
    unitPriceExGst: col.number(),
    buyPrice: col.number(),
    extraCost: col.number(),
    markupType: col.enum(MARKUP_TYPES).nullable(),
    markupValue: col.number().nullable(),
    markupSource: col.enum(MARKUP_SOURCES),
    markupGroupId: col.uuid().nullable(),
    isCustomLine: col.boolean(),
    showOnDocuments: col.boolean(),
    sortOrder: col.integer(),
    createdAt: col.timestamp(),
    updatedAt: col.timestamp(),
  },
});

export const DECORATIONS = defineTable({
  name: "quote_decorations",
  tenant: true,
  noun: "Quote decoration",
  references: {
    quote_group_id: "quote_groups",
    markup_group_id: "markup_groups",
    setup_markup_group_id: "markup_groups",
  },
  columns: {
    id: col.uuid(),
    quoteGroupId: col.uuid(),
    decorationItemId: col.uuid().nullable(),
    method: col.enum(DECORATION_METHODS).nullable(),
    position: col.text().nullable(),
    quantity: col.integer(),
    setupCost: col.number(),
    unitCost: col.number(),
    baseUnitCost: col.number(),
    baseSetupCost: col.number(),
    includeSetupCost: col.boolean(),
    markupType: col.enum(MARKUP_TYPES).nullable(),
    markupValue: col.number().nullable(),
    markupSource: col.enum(MARKUP_SOURCES),
    markupGroupId: col.uuid().nullable(),
    setupMarkupType: col.enum(MARKUP_TYPES).nullable(),
    setupMarkupValue: col.number().nullable(),
    setupMarkupSource: col.enum(MARKUP_SOURCES),
    setupMarkupGroupId: col.uuid().nullable(),
    rollUp: col.boolean(),
    rollUpSetup: col.boolean(),
    showOnDocuments: col.boolean(),
    description: col.text().nullable(),
    widthCm: col.number().nullable(),
    lengthCm: col.number().nullable(),
    necklineDropCm: col.number().nullable(),
    screenCount: col.integer().nullable(),
    screenMeshGrade: col.text().nullable(),
    colourCount: col.integer().nullable(),
    colours: col.json<QuoteGroupDecoration["colours"]>(),
    specialInstructions: col.text().nullable(),
    artworkFileUrl: col.text().nullable(),
    separationFileUrl: col.text().nullable(),
    sortOrder: col.integer(),
    createdAt: col.timestamp(),
    updatedAt: col.timestamp(),
  },
});

/** Rows of the items below a group, as postgres.js returns them (numeric columns as strings). */
export type LineRow = RowOf<typeof LINES>;
export type VariantRow = RowOf<typeof VARIANTS>;
export type DecorationRow = RowOf<typeof DECORATIONS>;

/** Cost and margin fields only for a caller holding costs.read (absent, not null, otherwise). */
export function toVariant(row: VariantRow, costs: boolean): QuoteVariant {
  return visibleTo(VARIANTS.read(row), costs);
}

export function toLine(row: LineRow, variants: VariantRow[], costs: boolean): QuoteLine {
  return LINES.read(row, { variants: variants.map((v) => toVariant(v, costs)) });
}

/** Colours come back base first, then in the operator's order (spec 2.6). */
export function orderColours(
  colours: { name: string; isBase: boolean }[],
): { name: string; isBase: boolean }[] {
  return [...colours.filter((c) => c.isBase), ...colours.filter((c) => !c.isBase)];
}

/** Cost and margin fields only for a caller holding costs.read (absent, not null, otherwise). */
export function toDecoration(row: DecorationRow, costs: boolean): QuoteGroupDecoration {
  return visibleTo({ ...DECORATIONS.read(row), colours: orderColours(row.colours) }, costs);
}
