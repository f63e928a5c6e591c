/**
 * The quotes service's contract: every operation it serves and every event it emits. A new
 * resource is a file beside these, listed once below.
 */
import { serviceContract } from "../operation.ts";
import { quoteEvents, quoteOperations } from "./quotes.ts";
import { groupEvents, groupOperations } from "./groups.ts";
import { lineEvents, lineOperations } from "./lines.ts";
import { variantEvents, variantOperations } from "./variants.ts";
import { decorationEvents, decorationOperations } from "./decorations.ts";
import { markupGroupEvents, markupGroupOperations } from "./markup_groups.ts";
import { taxRateEvents, taxRateOperations } from "./tax_rates.ts";
import { previewOperations } from "./preview.ts";

export * from "./values.ts";
export * from "./quotes.ts";
export * from "./groups.ts";
export * from "./lines.ts";
export * from "./variants.ts";
export * from "./decorations.ts";
export * from "./markup_groups.ts";
export * from "./tax_rates.ts";
export * from "./preview.ts";

export const quotesEvents = {
  ...quoteEvents,
  ...groupEvents,
  ...lineEvents,
  ...variantEvents,
  ...decorationEvents,
  ...markupGroupEvents,
  ...taxRateEvents,
};

/** The tags its resources' operations are listed under, and what each tag's operations do. */
const quotesTags = {
  Quotes: "Quotes, their lifecycle and their groups; a group's lines and decorations share " +
    "one row order",
  "Quote lines": "Lines of a quote group (garments, services, costs, discounts, surcharges) " +
    "and their size/colour variants, where cost and markup give the sell price",
  "Quote decorations": "Print or embroidery placements of a quote group, priced per unit and " +
    "per setup",
  "Markup groups": "Bands of markups by quantity or setup cost, which `group` rows take their " +
    "markup from",
  "Tax rates": "The rates a quote's tax is computed with; one is the organisation's default",
};

export const quotesContract = serviceContract("quotes", {
  ...quoteOperations,
  ...previewOperations,
  ...groupOperations,
  ...lineOperations,
  ...variantOperations,
  ...decorationOperations,
  ...markupGroupOperations,
  ...taxRateOperations,
}, { tags: quotesTags });
