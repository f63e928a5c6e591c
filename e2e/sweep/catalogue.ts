/** The route sweep's knowledge of the catalogue service (see `sweep.ts`). */
import type { ServiceSweep } from "./sweep.ts";

/** An item's supplier is a CRM vendor: the catalogue service keeps its id as given. */
const ITEM_VENDOR_REFERENCE = { supplierVendorId: "a CRM vendor, kept by the CRM service" };

export const catalogueSweep: ServiceSweep = {
  service: "catalogue",
  params: {
    catalogueItemId: "catalogueItemId",
    garmentVariantId: "garmentVariantId",
    prebuiltItemId: "prebuiltItemId",
  },
  references: {
    garmentCatalogueItemId: "catalogueItemId",
    supplierVendorId: "vendorId",
  },
  crossService: {
    createCatalogueItem: ITEM_VENDOR_REFERENCE,
    updateCatalogueItem: ITEM_VENDOR_REFERENCE,
  },
  validBodies: {
    bulkDeletePrebuiltItems: (f) => ({ target: { ids: [f.id("prebuiltItemId")] } }),
    bulkSetPrebuiltItemStatus: (f) => ({
      target: { ids: [f.id("prebuiltItemId")] },
      status: "draft",
    }),
    createGarmentVariant: (f) => ({
      garmentCatalogueItemId: f.id("catalogueItemId"),
      color: "Sweep one",
      size: "XL",
    }),
    bulkCreateGarmentVariants: (f) => ({
      input: [{ garmentCatalogueItemId: f.id("catalogueItemId"), color: "Sweep", size: "XL" }],
    }),
  },
  async create(client) {
    const catalogueItemId = await client.create("/v1/catalogue", {
      styleCode: "5000",
      name: "Tee",
    });
    const created = await client.post("/v1/garment-variants/bulk/create", {
      input: [{
        garmentCatalogueItemId: catalogueItemId,
        color: "Black",
        size: "M",
        stockOnHand: 5,
      }],
    }, 201);
    const garmentVariantId = (created as { id: string }[])[0]!.id;
    const prebuiltItemId = await client.create("/v1/prebuilt-items", {
      name: "Staff polo",
      garmentCatalogueItemId: catalogueItemId,
      decorations: [{ position: "Left chest", method: "Embroidery", unitCost: 2.1 }],
    });
    return { catalogueItemId, garmentVariantId, prebuiltItemId };
  },
  snapshot: (f) => ({
    catalogue: "/v1/catalogue?limit=100",
    variants: "/v1/garment-variants?limit=100",
    ledger: `/v1/garment-variants/${f.id("garmentVariantId")}/stock-adjustments`,
    catalogueSettings: "/v1/catalogue-settings",
    prebuiltItems: "/v1/prebuilt-items?limit=100",
  }),
};
