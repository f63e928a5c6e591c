import type {
  QuoteGroupDecoration,
  QuoteLine,
  QuoteVariant,
} from "@printshop/shared/contracts/quotes";
import { visibleTo } from "@printshop/shared/costs";

/** Rows of the items below a group, as postgres.js returns them (numeric columns as strings). */
export interface LineRow {
  id: string;
  quote_id: string;
  quote_group_id: string;
  line_type: QuoteLine["lineType"];
  garment_catalogue_item_id: string | null;
  product_name: string;
  product_sku: string | null;
  title: string | null;
  description: string | null;
  quantity: number;
  unit_price_ex_gst: string;
  value_type: "Flat" | "Percentage" | null;
  percentage: string | null;
  discount_value_type: "Flat" | "Percentage" | null;
  discount_percentage: string | null;
  custom_image_url: string | null;
  sort_order: number;
  created_at: Date;
  updated_at: Date;
}

export interface VariantRow {
  id: string;
  quote_id: string;
  quote_line_id: string;
  size: string | null;
  colour: string | null;
  quantity: number;
  unit_price_ex_gst: string;
  buy_price: string;
  extra_cost: string;
  markup_type: "percentage" | "fixed" | null;
  markup_value: string | null;
  markup_source: "group" | "manual";
  markup_group_id: string | null;
  is_custom_line: boolean;
  show_on_documents: boolean;
  sort_order: number;
  created_at: Date;
  updated_at: Date;
}

export interface DecorationRow {
  id: string;
  quote_id: string;
  quote_group_id: string;
  decoration_item_id: string | null;
  method: QuoteGroupDecoration["method"];
  position: string | null;
  quantity: number;
  unit_cost: string;
  setup_cost: string;
  base_unit_cost: string;
  base_setup_cost: string;
  include_setup_cost: boolean;
  markup_type: "percentage" | "fixed" | null;
  markup_value: string | null;
  markup_source: "group" | "manual";
  markup_group_id: string | null;
  setup_markup_type: "percentage" | "fixed" | null;
  setup_markup_value: string | null;
  setup_markup_source: "group" | "manual";
  setup_markup_group_id: string | null;
  roll_up: boolean;
  roll_up_setup: boolean;
  show_on_documents: boolean;
  description: string | null;
  width_cm: string | null;
  length_cm: string | null;
  neckline_drop_cm: string | null;
  screen_count: number | null;
  screen_mesh_grade: string | null;
  colour_count: number | null;
  colours: { name: string; isBase: boolean }[];
  special_instructions: string | null;
  artwork_file_url: string | null;
  separation_file_url: string | null;
  sort_order: number;
  created_at: Date;
  updated_at: Date;
}

const num = (value: string): number => Number(value);
const numOrNull = (value: string | null): number | null => value === null ? null : Number(value);

/** Cost and margin fields only for a caller holding costs.read (absent, not null, otherwise). */
export function toVariant(row: VariantRow, costs: boolean): QuoteVariant {
  return visibleTo({
    id: row.id,
    quoteLineId: row.quote_line_id,
    size: row.size,
    colour: row.colour,
    quantity: row.quantity,
    unitPriceExGst: num(row.unit_price_ex_gst),
    buyPrice: num(row.buy_price),
    extraCost: num(row.extra_cost),
    markupType: row.markup_type,
    markupValue: numOrNull(row.markup_value),
    markupSource: row.markup_source,
    markupGroupId: row.markup_group_id,
    isCustomLine: row.is_custom_line,
    showOnDocuments: row.show_on_documents,
    sortOrder: row.sort_order,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }, costs);
}

export function toLine(row: LineRow, variants: VariantRow[], costs: boolean): QuoteLine {
  return {
    id: row.id,
    quoteGroupId: row.quote_group_id,
    lineType: row.line_type,
    garmentCatalogueItemId: row.garment_catalogue_item_id,
    productName: row.product_name,
    productSku: row.product_sku,
    title: row.title,
    description: row.description,
    quantity: row.quantity,
    unitPriceExGst: num(row.unit_price_ex_gst),
    valueType: row.value_type,
    percentage: numOrNull(row.percentage),
    discountValueType: row.discount_value_type,
    discountPercentage: numOrNull(row.discount_percentage),
    customImageUrl: row.custom_image_url,
    sortOrder: row.sort_order,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    variants: variants.map((v) => toVariant(v, costs)),
  };
}

/** Colours come back base first, then in the operator's order (spec 2.6). */
export function orderColours(
  colours: { name: string; isBase: boolean }[],
): { name: string; isBase: boolean }[] {
  return [...colours.filter((c) => c.isBase), ...colours.filter((c) => !c.isBase)];
}

/** Cost and margin fields only for a caller holding costs.read (absent, not null, otherwise). */
export function toDecoration(row: DecorationRow, costs: boolean): QuoteGroupDecoration {
  return visibleTo({
    id: row.id,
    quoteGroupId: row.quote_group_id,
    decorationItemId: row.decoration_item_id,
    method: row.method,
    position: row.position,
    quantity: row.quantity,
    setupCost: num(row.setup_cost),
    unitCost: num(row.unit_cost),
    baseUnitCost: num(row.base_unit_cost),
    baseSetupCost: num(row.base_setup_cost),
    includeSetupCost: row.include_setup_cost,
    markupType: row.markup_type,
    markupValue: numOrNull(row.markup_value),
    markupSource: row.markup_source,
    markupGroupId: row.markup_group_id,
    setupMarkupType: row.setup_markup_type,
    setupMarkupValue: numOrNull(row.setup_markup_value),
    setupMarkupSource: row.setup_markup_source,
    setupMarkupGroupId: row.setup_markup_group_id,
    rollUp: row.roll_up,
    rollUpSetup: row.roll_up_setup,
    showOnDocuments: row.show_on_documents,
    description: row.description,
    widthCm: numOrNull(row.width_cm),
    lengthCm: numOrNull(row.length_cm),
    necklineDropCm: numOrNull(row.neckline_drop_cm),
    screenCount: row.screen_count,
    screenMeshGrade: row.screen_mesh_grade,
    colourCount: row.colour_count,
    colours: orderColours(row.colours),
    specialInstructions: row.special_instructions,
    artworkFileUrl: row.artwork_file_url,
    separationFileUrl: row.separation_file_url,
    sortOrder: row.sort_order,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }, costs);
}

export const LINE_COLUMNS = `id, quote_id, quote_group_id, line_type, garment_catalogue_item_id,
  product_name, product_sku, title, description, quantity, unit_price_ex_gst, value_type,
  percentage, discount_value_type, discount_percentage, custom_image_url, sort_order, created_at,
  updated_at`;

export const VARIANT_COLUMNS = `id, quote_id, quote_line_id, size, colour, quantity,
  unit_price_ex_gst, buy_price, extra_cost, markup_type, markup_value, markup_source,
  markup_group_id, is_custom_line, show_on_documents, sort_order, created_at, updated_at`;

export const DECORATION_COLUMNS = `id, quote_id, quote_group_id, decoration_item_id, method,
  position, quantity, unit_cost, setup_cost, base_unit_cost, base_setup_cost, include_setup_cost,
  markup_type, markup_value, markup_source, markup_group_id, setup_markup_type,
  setup_markup_value, setup_markup_source, setup_markup_group_id, roll_up, roll_up_setup,
  show_on_documents, description, width_cm, length_cm, neckline_drop_cm, screen_count,
  screen_mesh_grade, colour_count, colours, special_instructions, artwork_file_url,
  separation_file_url, sort_order, created_at, updated_at`;
