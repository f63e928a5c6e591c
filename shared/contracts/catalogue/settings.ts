/** The organisation's catalogue settings: how sizes sort, and whether stock may go negative. */
import { z } from "zod";
import { DateTime, described, setExamples } from "../common.ts";
import { defineEvents } from "../events.ts";
import { operations } from "../operation.ts";
import { Flag } from "../quotes/values.ts";
import { DEFAULT_SIZE_ORDER, Label } from "./values.ts";

const SETTINGS_DESCRIPTIONS = {
  sizeOrder: "Size labels in the order variants are listed (matched without regard to case); " +
    "sizes not listed come after, alphabetically",
  allowNegativeStock: "Whether an adjustment may take stock below zero (and below what is " +
    "reserved), for shops that sell before stock arrives",
  updatedAt: "When the settings last changed; null while they are the defaults",
};

export const CatalogueSettings = z.object(described({
  sizeOrder: z.array(z.string()),
  allowNegativeStock: z.boolean(),
  updatedAt: DateTime.nullable(),
}, SETTINGS_DESCRIPTIONS)).meta({
  id: "CatalogueSettings",
  description: "How the organisation's catalogue sorts sizes and treats stock",
});
export type CatalogueSettings = z.infer<typeof CatalogueSettings>;
setExamples(CatalogueSettings, {
  sizeOrder: [...DEFAULT_SIZE_ORDER],
  allowNegativeStock: false,
  updatedAt: null,
});

export const UpdateCatalogueSettingsBody = z.strictObject(described({
  sizeOrder: z.array(Label).max(500, "At most 500 sizes").refine(
    (sizes) => new Set(sizes.map((s) => s.toUpperCase())).size === sizes.length,
    "Each size may appear once",
  ).optional(),
  allowNegativeStock: Flag.optional(),
}, SETTINGS_DESCRIPTIONS)).meta({
  id: "UpdateCatalogueSettingsBody",
  description: "The settings to change; those not given stay as they are",
});
setExamples(UpdateCatalogueSettingsBody, {
  sizeOrder: ["XS", "S", "M", "L", "XL", "2XL", "3XL", "S-T", "M-T", "L-T"],
});
export type UpdateCatalogueSettingsBody = z.infer<typeof UpdateCatalogueSettingsBody>;

export const settingsEvents = defineEvents("catalogue", "garments.read", {
  "catalogue_settings.updated": {
    summary: "The organisation's catalogue settings changed",
    data: CatalogueSettings,
  },
});

export const settingsOperations = operations("Catalogue settings", {
  getCatalogueSettings: {
    method: "GET",
    path: "/v1/catalogue-settings",
    scope: "garments.read",
    summary: "Read the catalogue settings (the defaults until changed)",
    responses: { 200: CatalogueSettings },
  },
  updateCatalogueSettings: {
    method: "PATCH",
    path: "/v1/catalogue-settings",
    scope: "garments.write",
    summary: "Change the size order or the negative-stock rule",
    body: UpdateCatalogueSettingsBody,
    responses: { 200: CatalogueSettings },
    events: ["catalogue_settings.updated"],
  },
});
