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

export * from "./values.ts";
export * from "./quotes.ts";
export * from "./groups.ts";
export * from "./lines.ts";
export * from "./variants.ts";
export * from "./decorations.ts";
export * from "./markup_groups.ts";
export * from "./tax_rates.ts";

export const quotesEvents = {
  ...quoteEvents,
  ...groupEvents,
  ...lineEvents,
  ...variantEvents,
  ...decorationEvents,
  ...markupGroupEvents,
  ...taxRateEvents,
};

export const quotesContract = serviceContract("quotes", {
  ...quoteOperations,
  ...groupOperations,
  ...lineOperations,
  ...variantOperations,
  ...decorationOperations,
  ...markupGroupOperations,
  ...taxRateOperations,
});
