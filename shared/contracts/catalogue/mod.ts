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

export const catalogueContract = serviceContract("catalogue", {
  ...catalogueItemOperations,
  ...variantOperations,
  ...stockOperations,
  ...settingsOperations,
  ...prebuiltItemOperations,
});
