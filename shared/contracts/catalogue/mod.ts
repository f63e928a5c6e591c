/**
 * The catalogue service's contract: every operation it serves and every event it emits. A new
 * resource is a file beside these, listed once below.
 */
import { serviceContract } from "../operation.ts";
import { catalogueItemEvents, catalogueItemOperations } from "./items.ts";
import { variantEvents, variantOperations } from "./variants.ts";
import { stockEvents, stockOperations } from "./stock.ts";
import { settingsEvents, settingsOperations } from "./settings.ts";
import { prebuiltItemEvents, prebuiltItemOperations } from "./prebuilt_items.ts";

export * from "./values.ts";
export * from "./items.ts";
export * from "./variants.ts";
export * from "./stock.ts";
export * from "./settings.ts";
export * from "./prebuilt_items.ts";

export const catalogueEvents = {
  ...catalogueItemEvents,
  ...variantEvents,
  ...stockEvents,
  ...settingsEvents,
  ...prebuiltItemEvents,
};

/** The tags its resources' operations are listed under, and what each tag's operations do. */
const catalogueTags = {
  "Garment catalogue": "The garment styles the shop buys and sells, paged with a cursor",
  "Garment variants": "Colours and sizes of catalogue items with their stock, created in bulk",
  "Stock ledger": "Every change of a variant's stock, with who made it and why",
  "Pre-built items": "Saved garment-plus-decoration combinations, changed one by one or in bulk " +
    "over a target",
  "Catalogue settings": "How the organisation's sizes sort and whether stock may go negative",
};

export const catalogueContract = serviceContract("catalogue", {
  ...catalogueItemOperations,
  ...variantOperations,
  ...stockOperations,
  ...settingsOperations,
  ...prebuiltItemOperations,
}, { tags: catalogueTags });
